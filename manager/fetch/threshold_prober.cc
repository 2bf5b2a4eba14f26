#include "manager/fetch/threshold_prober.h"

#include <variant>

#include "absl/cleanup/cleanup.h"

#include "manager/peer/peer_messages.h"
#include "protocol/base/logging.h"
#include "protocol/base/status.h"

namespace rplasma::fetch {
namespace {

absl::StatusOr<absl::Duration> TimeGet(transport::Channel& channel, uint64_t bytes, absl::Time deadline,
                                       const Clock& clock) {
  const absl::Time t0 = clock.Now();
  ASSIGN_OR_RETURN(std::string wire, channel.Call(peer::EncodeRequest(peer::ProbeGetRequest{bytes}), deadline));
  ASSIGN_OR_RETURN(peer::PeerReplyView reply, peer::DecodeReply(wire));
  const auto* get = std::get_if<peer::GetReplyView>(&reply);
  if (get == nullptr || get->payload.size() != bytes) return ProtocolError("probe get: unexpected reply");
  return clock.Now() - t0;
}

absl::StatusOr<absl::Duration> TimePin(transport::Channel& channel, uint64_t bytes, uint8_t* dst, absl::Time deadline,
                                       const Clock& clock) {
  const absl::Time t0 = clock.Now();
  ASSIGN_OR_RETURN(std::string wire, channel.Call(peer::EncodeRequest(peer::ProbePinRequest{bytes}), deadline));
  ASSIGN_OR_RETURN(peer::PeerReplyView reply, peer::DecodeReply(wire));
  const auto* pin = std::get_if<peer::PinReply>(&reply);
  if (pin == nullptr || pin->region.length != bytes) return ProtocolError("probe pin: unexpected reply");
  const peer::PinReply lease = *pin;
  absl::Status read = channel.Read(lease.region, dst, deadline);
  // The Unpin is not timed: a fetch does not wait for it (the manager's LeaseEnder sends it).
  const absl::Time read_done = clock.Now();
  ASSIGN_OR_RETURN(std::string unpin, channel.Call(peer::EncodeRequest(peer::UnpinRequest{lease.lease_id}), deadline));
  RETURN_IF_ERROR(read);
  RETURN_IF_ERROR(peer::DecodeReply(unpin).status());
  return read_done - t0;
}

}  // namespace

absl::StatusOr<std::vector<ProbeSample>> ProbeThreshold(transport::Channel& channel, peer::LocalStore& store,
                                                        absl::Time deadline, const Clock& clock, int rounds) {
  const ObjectID scratch_id = ObjectID::Random();
  ASSIGN_OR_RETURN(CreatedObject scratch, store.Create(scratch_id, peer::kMaxProbeBytes, 0));
  absl::Cleanup abort_scratch = [&] {
    absl::Status s = store.Abort(scratch_id);
    if (!s.ok()) LOG(WARNING) << "abort of the probe scratch object: " << s;
  };
  std::vector<ProbeSample> samples;
  for (uint64_t bytes = 4096; bytes <= peer::kMaxProbeBytes; bytes *= 4) {
    ProbeSample sample{bytes, absl::InfiniteDuration(), absl::InfiniteDuration()};
    for (int r = 0; r < rounds; ++r) {
      ASSIGN_OR_RETURN(absl::Duration get, TimeGet(channel, bytes, deadline, clock));
      ASSIGN_OR_RETURN(absl::Duration pin, TimePin(channel, bytes, scratch.base(), deadline, clock));
      sample.get_time = std::min(sample.get_time, get);
      sample.pin_time = std::min(sample.pin_time, pin);
    }
    samples.push_back(sample);
  }
  return samples;
}

}  // namespace rplasma::fetch
