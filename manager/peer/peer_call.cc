#include "manager/peer/peer_call.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_format.h"

#include "manager/peer/peer_messages.h"
#include "protocol/base/status.h"

namespace rplasma::peer {
namespace {

constexpr char kLeaseLapsePayload[] = "rplasma/lease-lapsed";

}  // namespace

absl::Status VerifyChecksum(const ObjectID& id, uint64_t checksum, const ObjectDescription& owner) {
  if (checksum == owner.checksum) return absl::OkStatus();
  return MakeError(ErrorCode::kStaleObject,
                   absl::StrFormat("fetch %s: checksum %016x of the received bytes differs from the owner's %016x",
                                   id.Hex(), checksum, owner.checksum));
}

absl::Status LeaseLapseError(const ObjectID& id, uint64_t lease_id, uint64_t lease_ttl_ms) {
  absl::Status status =
      MakeError(ErrorCode::kStaleObject,
                absl::StrFormat("fetch %s: lease %d (TTL %d ms) expired before the reads completed; discarded",
                                id.Hex(), lease_id, lease_ttl_ms));
  status.SetPayload(kLeaseLapsePayload, absl::Cord("1"));
  return status;
}

absl::StatusOr<PeerReplyView> CallPeer(transport::Channel& channel, const PeerRequest& request, absl::Time deadline,
                                       std::string& wire) {
  ASSIGN_OR_RETURN(wire, channel.Call(EncodeRequest(request), deadline));
  return DecodeReply(wire);
}

bool IsLeaseLapse(const absl::Status& status) {
  return ErrorCodeOf(status) == ErrorCode::kStaleObject && status.GetPayload(kLeaseLapsePayload).has_value();
}

}  // namespace rplasma::peer
