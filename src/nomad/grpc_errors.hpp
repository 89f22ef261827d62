#pragma once
// The one place where the driver's errors become gRPC statuses, as Nomad's
// client reads them (plugins/drivers/client.go, helper/pluginutils/
// grpcutils/utils.go: Unavailable is "the plugin may be shutting down",
// a StartTask failure's RecoverableError detail says whether to retry).

#include <grpcpp/grpcpp.h>

#include <string>

#include "common/result.hpp"
#include "driver.pb.h"
#include "nomad/taskscope_client.hpp"

namespace taskscope::nomad {

/// The message of the Unavailable status of calls during and after a shutdown.
inline const std::string kPluginShutdown = "plugin is shut down";

/// taskscope's error names -> gRPC codes.
grpc::Status toStatus(const common::Error& e);

/// A failed start: FailedPrecondition with a RecoverableError detail.
grpc::Status startFailure(const common::Error& e);

/// A task ID this plugin process does not know (NotFound).
grpc::Status unknownTask(const std::string& id);

void fillExit(const ExitStatus& s, hashicorp::nomad::plugins::drivers::proto::ExitResult& r);

}  // namespace taskscope::nomad
