// The driver's errors as the gRPC statuses Nomad's client reads
// (grpc_errors.hpp).
#include "nomad/grpc_errors.hpp"

#include <utility>

#include "common/error_names.hpp"
#include "recoverable_error.pb.h"
#include "rpc_status.pb.h"

namespace taskscope::nomad {

namespace errors = common::errors;

namespace {

// taskscope's error names -> gRPC codes Nomad's client reads; any other
// name is Internal.
constexpr std::pair<const char*, grpc::StatusCode> kGrpcCodes[] = {
    {errors::kNoSuchTask, grpc::StatusCode::NOT_FOUND},
    {errors::kInvalidConfig, grpc::StatusCode::INVALID_ARGUMENT},
    {errors::kInvalidSpec, grpc::StatusCode::INVALID_ARGUMENT},
    {errors::kInvalidName, grpc::StatusCode::INVALID_ARGUMENT},
    {errors::kInvalidArgument, grpc::StatusCode::INVALID_ARGUMENT},
    {errors::kInvalidSignal, grpc::StatusCode::INVALID_ARGUMENT},
    {errors::kNotRunning, grpc::StatusCode::FAILED_PRECONDITION},
    {errors::kStillRunning, grpc::StatusCode::FAILED_PRECONDITION},
    {errors::kTaskExists, grpc::StatusCode::FAILED_PRECONDITION},
    {errors::kNetworkInUse, grpc::StatusCode::FAILED_PRECONDITION},
    {errors::kNoManager, grpc::StatusCode::UNAVAILABLE},
    {errors::kBusy, grpc::StatusCode::UNAVAILABLE},
    {errors::kResourceExhausted, grpc::StatusCode::UNAVAILABLE},
    {errors::kOverloaded, grpc::StatusCode::UNAVAILABLE},
    {errors::kCancelled, grpc::StatusCode::CANCELLED},
    {errors::kTimeout, grpc::StatusCode::DEADLINE_EXCEEDED},
};

// The failed starts a retry may mend. ShuttingDown: the manager was
// restarting; the next try finds the new one. Overloaded: the node did not
// make the task in start_timeout_ms and nothing of it ran; Nomad's client
// retries the start (restart policy).
constexpr const char* kRecoverable[] = {errors::kNoManager, errors::kSystemdFailed, errors::kResourceExhausted,
                                        errors::kInternal,  errors::kBusy,          errors::kShuttingDown,
                                        errors::kOverloaded};

}  // namespace

grpc::Status toStatus(const common::Error& e) {
    grpc::StatusCode code = grpc::StatusCode::INTERNAL;
    for (const auto& [name, c] : kGrpcCodes)
        if (e.name == name) code = c;
    return grpc::Status(code, e.name + ": " + e.message);
}

// A failed start as Nomad's client reads it: FailedPrecondition with a
// RecoverableError detail saying whether a retry may help.
grpc::Status startFailure(const common::Error& e) {
    bool recoverable = false;
    for (const char* name : kRecoverable) recoverable = recoverable || e.name == name;
    hashicorp::nomad::plugins::shared::structs::RecoverableError detail;
    detail.set_recoverable(recoverable);
    google::rpc::Status st;
    st.set_code(static_cast<int>(grpc::StatusCode::FAILED_PRECONDITION));
    st.set_message(e.name + ": " + e.message);
    st.add_details()->PackFrom(detail);
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, st.message(), st.SerializeAsString());
}

grpc::Status unknownTask(const std::string& id) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "task not found for given id " + id);
}

void fillExit(const ExitStatus& s, hashicorp::nomad::plugins::drivers::proto::ExitResult& r) {
    r.set_exit_code(s.exitCode);
    r.set_signal(s.signal);
    r.set_oom_killed(s.oomKilled);
}

}  // namespace taskscope::nomad
