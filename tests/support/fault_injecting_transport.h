// FaultInjectingTransport: a transport::Transport decorator that makes the network between this
// manager and its peers lossy and slow, seeded, at the transport seam (the host kernel has no netem).
// Fault tests build it through tests/support/faulty_manager_main.cc.
//
// Only the requesting side is faulted: the Calls and Reads of the Channels that Connect and
// ConnectPrivate return. Listen, the serving side, the connects themselves and RegisterArena go
// straight to the inner transport.
// Each Call or Read is two messages, the request and then its reply (a Read's data); each message
// independently
//   - is lost with probability `loss`: a lost request never reaches the peer, a lost reply was
//     served there (a Pin holds its lease) but never arrives. Either way the operation ends only at
//     the caller's deadline, with kDeadlineExceeded, as a black-holed packet would;
//   - is otherwise delayed by a uniform draw from [min_delay, max_delay]. A delay that would end past
//     the deadline ends the operation at the deadline with kDeadlineExceeded.
// An operation the inner channel fails keeps the inner error (no reply fault is drawn for it).
// Every draw comes from one generator seeded with `seed`, in the order operations take them.
//
// Shutdown() wakes every operation waiting out a loss or a delay (they fail with kUnavailable) and
// then shuts the inner transport down.
//
// Thread-safety: as thread-safe as the inner transport; draws are serialized, waits overlap.
#ifndef RPLASMA_TESTS_SUPPORT_FAULT_INJECTING_TRANSPORT_H_
#define RPLASMA_TESTS_SUPPORT_FAULT_INJECTING_TRANSPORT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

#include "manager/transport/transport.h"

namespace rplasma::testing {

struct NetworkFaults {
  double loss = 0;                                  // per message, in [0, 1]
  absl::Duration min_delay = absl::ZeroDuration();  // per message delivered
  absl::Duration max_delay = absl::ZeroDuration();  // >= min_delay
  uint64_t seed = 1;

  absl::Status Validate() const;
};

// What the decorator did so far (all its channels together).
struct NetworkFaultCounts {
  uint64_t messages = 0;  // requests and replies that drew a fault
  uint64_t lost = 0;
  uint64_t late = 0;  // delayed past their deadline
};

class FaultSource;

class FaultInjectingTransport : public transport::Transport {
 public:
  // REQUIRES: faults.Validate().ok(); inner != nullptr.
  FaultInjectingTransport(std::unique_ptr<transport::Transport> inner, const NetworkFaults& faults);
  ~FaultInjectingTransport() override;  // Shutdown()

  absl::string_view name() const override { return inner_->name(); }
  absl::Status RegisterArena(uint8_t* base, uint64_t size) override { return inner_->RegisterArena(base, size); }
  transport::RemoteRegion RegionFor(uint64_t offset, uint64_t length) const override {
    return inner_->RegionFor(offset, length);
  }
  absl::StatusOr<std::string> Listen(const std::string& address, transport::RequestHandler* handler) override {
    return inner_->Listen(address, handler);
  }
  absl::StatusOr<std::shared_ptr<transport::Channel>> Connect(const std::string& address, absl::Time deadline) override;
  // The inner transport's private channel, faulted like Connect's.
  absl::StatusOr<std::shared_ptr<transport::Channel>> ConnectPrivate(const std::string& address,
                                                                     absl::Time deadline) override;
  transport::TransportStats stats() const override { return inner_->stats(); }
  void Shutdown() override;

  NetworkFaultCounts counts() const;

 private:
  // `inner`'s channel, faulted by source_.
  absl::StatusOr<std::shared_ptr<transport::Channel>> Faulted(
      absl::StatusOr<std::shared_ptr<transport::Channel>> inner);

  const std::unique_ptr<transport::Transport> inner_;
  const std::shared_ptr<FaultSource> source_;  // shared with the channels, which may outlive us
};

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_SUPPORT_FAULT_INJECTING_TRANSPORT_H_
