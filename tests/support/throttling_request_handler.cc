#include "tests/support/throttling_request_handler.h"

namespace rplasma::testing {

void ThrottlingRequestHandler::OnConnect(uint64_t conn_id, const std::string& peer_address) {
  inner_->OnConnect(conn_id, peer_address);
}

transport::CallReply ThrottlingRequestHandler::HandleCall(uint64_t conn_id, absl::string_view request) {
  transport::CallReply reply = inner_->HandleCall(conn_id, request);
  Throttle(reply.size());
  return reply;
}

bool ThrottlingRequestHandler::AllowRead(uint64_t conn_id, const transport::RemoteRegion& region) {
  const bool allowed = inner_->AllowRead(conn_id, region);
  // The tcp transport streams the region right after this returns: delay the whole of it here.
  if (allowed) Throttle(region.length);
  return allowed;
}

void ThrottlingRequestHandler::OnDisconnect(uint64_t conn_id) { inner_->OnDisconnect(conn_id); }

void ThrottlingRequestHandler::Throttle(uint64_t bytes) {
  if (bytes == 0) return;
  clock_->SleepFor(absl::Seconds(static_cast<double>(bytes) / static_cast<double>(bytes_per_sec_)));
}

}  // namespace rplasma::testing
