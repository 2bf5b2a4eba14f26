// ThrottlingRequestHandler: a transport::RequestHandler decorator that makes a serving manager slow.
// It forwards everything to the inner handler and then sleeps as if the bytes it serves — each Call
// reply, and each tcp Read it allows — went out at `bytes_per_sec`. Fault tests use it (through
// tests/support/throttled_manager_main.cc) to kill an owner part-way through a transfer.
//
// A verbs Read never reaches AllowRead (the NIC serves it), so only Get-sized replies slow down
// there.
//
// Thread-safety: as thread-safe as the inner handler; the sleeps of concurrent calls overlap.
#ifndef RPLASMA_TESTS_SUPPORT_THROTTLING_REQUEST_HANDLER_H_
#define RPLASMA_TESTS_SUPPORT_THROTTLING_REQUEST_HANDLER_H_

#include <cstdint>
#include <string>

#include "manager/transport/transport.h"
#include "protocol/base/clock.h"

namespace rplasma::testing {

class ThrottlingRequestHandler : public transport::RequestHandler {
 public:
  // REQUIRES: bytes_per_sec > 0; `inner` and `clock` outlive this handler.
  ThrottlingRequestHandler(transport::RequestHandler* inner, uint64_t bytes_per_sec, Clock* clock = &Clock::Real())
      : inner_(inner), bytes_per_sec_(bytes_per_sec), clock_(clock) {}

  void OnConnect(uint64_t conn_id, const std::string& peer_address) override;
  transport::CallReply HandleCall(uint64_t conn_id, absl::string_view request) override;
  bool AllowRead(uint64_t conn_id, const transport::RemoteRegion& region) override;
  void OnDisconnect(uint64_t conn_id) override;

 private:
  void Throttle(uint64_t bytes);

  transport::RequestHandler* const inner_;
  const uint64_t bytes_per_sec_;
  Clock* const clock_;
};

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_SUPPORT_THROTTLING_REQUEST_HANDLER_H_
