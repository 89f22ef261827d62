#pragma once
// ExecTaskStreaming as a gRPC callback reactor: `nomad alloc exec` through
// the driver. Nomad's client never half-closes its side of the stream: it
// forwards the user's input until the user goes, and reads until the
// driver ends the call (plugins/drivers/client.go ExecTaskStreamingRaw:
// io.EOF from Recv is the only clean end). So the driver must end the call
// with OK once it has sent the exit, while Nomad may still be able to
// send; grpc++'s synchronous API cannot return while another thread waits
// in Read (it could only cancel the call, which Nomad reports as an
// error), a reactor can Finish with a read outstanding.
//
// Threads: gRPC's callbacks only queue (a message in, a write done); the
// input thread writes stdin to the session and resizes its terminal, the
// output thread reads the session's output and, at its end, its exit. Both
// are joined in OnDone. Writes go one at a time from a bounded queue, so a
// slow reader holds the output thread back instead of filling memory.

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "driver.grpc.pb.h"
#include "nomad/task_spec_builder.hpp"
#include "nomad/taskscope_client.hpp"

namespace taskscope::nomad {

class PluginState;

class ExecStreamReactor final
    : public grpc::ServerBidiReactor<hashicorp::nomad::plugins::drivers::proto::ExecTaskStreamingRequest,
                                     hashicorp::nomad::plugins::drivers::proto::ExecTaskStreamingResponse> {
public:
    using Request = hashicorp::nomad::plugins::drivers::proto::ExecTaskStreamingRequest;
    using Response = hashicorp::nomad::plugins::drivers::proto::ExecTaskStreamingResponse;

    explicit ExecStreamReactor(PluginState& state);

    void OnReadDone(bool ok) override;
    void OnWriteDone(bool ok) override;
    void OnCancel() override;
    void OnDone() override;

private:
    /// The setup message: finds the task, starts the session, starts the
    /// threads; an error ends the call.
    void setup(const Request& first);
    void inputLoop();
    void outputLoop();
    /// Queues a response (blocks while the queue is full); false once the
    /// call is ending.
    bool send(Response r);
    /// Ends the call once every queued response is written.
    void finishAfterWrites(grpc::Status status);
    /// The call ended (cancelled, or the client is gone): finish at once,
    /// or after the write in flight (mu_ held).
    void finishLocked(grpc::Status status);
    /// Starts the next write or the finish that is due.
    void pump();

    PluginState& state_;
    Request in_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool setupDone_ = false;
    bool readsEnded_ = false;      ///< the client half-closed, or the call ended
    bool ending_ = false;          ///< no more writes: finished, finishing or cancelled
    bool finished_ = false;        ///< a finish is decided (finishNow_) or issued
    bool writing_ = false;
    std::deque<Response> queue_;
    std::optional<Response> inFlight_;
    std::optional<grpc::Status> finishWith_;  ///< after the queue drains
    std::optional<grpc::Status> finishNow_;   ///< as soon as no write is in flight
    std::deque<Request> inbox_;               ///< for the input thread
    bool tty_ = false;
    uint16_t rows_ = 24, cols_ = 80;
    std::optional<ExecSession> session_;
    std::unique_ptr<Client> client_;  ///< the session's own connection
    std::thread input_, output_;
};

}  // namespace taskscope::nomad
