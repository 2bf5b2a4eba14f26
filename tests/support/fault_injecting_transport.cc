#include "tests/support/fault_injecting_transport.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"

#include "protocol/base/logging.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"

namespace rplasma::testing {

absl::Status NetworkFaults::Validate() const {
  if (!(loss >= 0 && loss <= 1)) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrFormat("network faults: loss %g is not in [0, 1]", loss));
  }
  if (min_delay < absl::ZeroDuration() || max_delay < min_delay) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrFormat("network faults: delay range [%s, %s] is not 0 <= min <= max",
                                     absl::FormatDuration(min_delay), absl::FormatDuration(max_delay)));
  }
  return absl::OkStatus();
}

// The seeded draws and the waits, shared by the transport and every channel it made.
class FaultSource {
 public:
  explicit FaultSource(const NetworkFaults& faults) : faults_(faults), random_(faults.seed) {}

  // Delivers one message of `operation` (e.g. "Call to 10.0.0.2:7000"): returns at once, after a
  // delay, or at the deadline with kDeadlineExceeded if the message is lost or arrives too late.
  absl::Status Deliver(absl::string_view operation, absl::string_view message, absl::Time deadline) {
    MutexLock lock(&mu_);
    ++counts_.messages;
    const bool lost = std::uniform_real_distribution<double>(0, 1)(random_) < faults_.loss;
    const absl::Duration delay =
        faults_.min_delay + absl::Nanoseconds(std::uniform_int_distribution<int64_t>(
                                0, absl::ToInt64Nanoseconds(faults_.max_delay - faults_.min_delay))(random_));
    const absl::Time arrival = absl::Now() + delay;
    if (lost) {
      ++counts_.lost;
    } else if (arrival > deadline) {
      ++counts_.late;
    }
    const absl::Time until = lost ? deadline : std::min(arrival, deadline);
    // Released while waiting: other operations draw and wait meanwhile.
    lock.AwaitWithDeadline(absl::Condition(&shut_down_), until);
    if (shut_down_) {
      return MakeError(ErrorCode::kUnavailable, absl::StrFormat("%s: transport shut down", operation));
    }
    if (lost || arrival > deadline) {
      return MakeError(ErrorCode::kDeadlineExceeded,
                       absl::StrFormat("%s: deadline exceeded (%s %s by fault injection)", operation, message,
                                       lost ? "lost" : "delayed past the deadline"));
    }
    return absl::OkStatus();
  }

  void Shutdown() {
    MutexLock lock(&mu_);
    shut_down_ = true;
  }

  NetworkFaultCounts counts() const {
    MutexLock lock(&mu_);
    return counts_;
  }

 private:
  const NetworkFaults faults_;
  mutable absl::Mutex mu_;
  std::mt19937_64 random_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  NetworkFaultCounts counts_ ABSL_GUARDED_BY(mu_);
};

namespace {

class FaultInjectingChannel : public transport::Channel {
 public:
  FaultInjectingChannel(std::shared_ptr<transport::Channel> inner, std::shared_ptr<FaultSource> source)
      : inner_(std::move(inner)), source_(std::move(source)) {}

  absl::StatusOr<std::string> Call(absl::string_view request, absl::Time deadline) override {
    const std::string operation = "Call to " + inner_->peer_address();
    RETURN_IF_ERROR(source_->Deliver(operation, "request", deadline));
    absl::StatusOr<std::string> reply = inner_->Call(request, deadline);
    if (!reply.ok()) return reply;
    RETURN_IF_ERROR(source_->Deliver(operation, "reply", deadline));
    return reply;
  }

  absl::Status Read(const transport::RemoteRegion& region, uint8_t* dst, absl::Time deadline) override {
    const std::string operation = absl::StrFormat("Read of %u bytes from %s", region.length, inner_->peer_address());
    RETURN_IF_ERROR(source_->Deliver(operation, "request", deadline));
    RETURN_IF_ERROR(inner_->Read(region, dst, deadline));
    return source_->Deliver(operation, "data", deadline);
  }

  bool healthy() const override { return inner_->healthy(); }
  const std::string& peer_address() const override { return inner_->peer_address(); }

 private:
  const std::shared_ptr<transport::Channel> inner_;
  const std::shared_ptr<FaultSource> source_;
};

}  // namespace

FaultInjectingTransport::FaultInjectingTransport(std::unique_ptr<transport::Transport> inner,
                                                 const NetworkFaults& faults)
    : inner_(std::move(inner)), source_(std::make_shared<FaultSource>(faults)) {}

FaultInjectingTransport::~FaultInjectingTransport() {
  Shutdown();
  const NetworkFaultCounts counts = source_->counts();
  LOG(INFO) << "fault injection: " << counts.messages << " messages, " << counts.lost << " lost, " << counts.late
            << " delayed past their deadline";
}

absl::StatusOr<std::shared_ptr<transport::Channel>> FaultInjectingTransport::Connect(const std::string& address,
                                                                                     absl::Time deadline) {
  return Faulted(inner_->Connect(address, deadline));
}

absl::StatusOr<std::shared_ptr<transport::Channel>> FaultInjectingTransport::ConnectPrivate(const std::string& address,
                                                                                            absl::Time deadline) {
  return Faulted(inner_->ConnectPrivate(address, deadline));
}

absl::StatusOr<std::shared_ptr<transport::Channel>> FaultInjectingTransport::Faulted(
    absl::StatusOr<std::shared_ptr<transport::Channel>> inner) {
  RETURN_IF_ERROR(inner.status());
  return std::shared_ptr<transport::Channel>(std::make_shared<FaultInjectingChannel>(*std::move(inner), source_));
}

void FaultInjectingTransport::Shutdown() {
  source_->Shutdown();
  inner_->Shutdown();
}

NetworkFaultCounts FaultInjectingTransport::counts() const { return source_->counts(); }

}  // namespace rplasma::testing
