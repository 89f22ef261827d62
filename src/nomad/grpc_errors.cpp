#include "nomad/grpc_errors.hpp"

#include "recoverable_error.pb.h"
#include "rpc_status.pb.h"

namespace taskscope::nomad {

// taskscope's error names -> gRPC codes Nomad's client reads.
grpc::Status toStatus(const common::Error& e) {
    grpc::StatusCode code = grpc::StatusCode::INTERNAL;
    if (e.name == "NoSuchTask") code = grpc::StatusCode::NOT_FOUND;
    else if (e.name == "InvalidConfig" || e.name == "InvalidSpec" || e.name == "InvalidName" ||
             e.name == "InvalidArgument" || e.name == "InvalidSignal")
        code = grpc::StatusCode::INVALID_ARGUMENT;
    else if (e.name == "NotRunning" || e.name == "StillRunning" || e.name == "TaskExists")
        code = grpc::StatusCode::FAILED_PRECONDITION;
    else if (e.name == "NoManager" || e.name == "Busy" || e.name == "ResourceExhausted" || e.name == "Overloaded")
        code = grpc::StatusCode::UNAVAILABLE;
    else if (e.name == "Cancelled")
        code = grpc::StatusCode::CANCELLED;
    else if (e.name == "Timeout")
        code = grpc::StatusCode::DEADLINE_EXCEEDED;
    else if (e.name == "NetworkInUse")
        code = grpc::StatusCode::FAILED_PRECONDITION;
    return grpc::Status(code, e.name + ": " + e.message);
}

// A failed start as Nomad's client reads it: FailedPrecondition with a
// RecoverableError detail saying whether a retry may help.
grpc::Status startFailure(const common::Error& e) {
    // ShuttingDown: the manager was restarting; the next try finds the new one.
    // Overloaded: the node did not make the task in start_timeout_ms and
    // nothing of it ran; Nomad's client retries the start (restart policy).
    const bool recoverable = e.name == "NoManager" || e.name == "SystemdFailed" || e.name == "ResourceExhausted" ||
                             e.name == "Internal" || e.name == "Busy" || e.name == "ShuttingDown" ||
                             e.name == "Overloaded";
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
