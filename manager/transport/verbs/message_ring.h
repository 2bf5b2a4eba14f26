// MessageRing: the registered SEND/RECV buffers of one endpoint, and the flow-control constants.
//
// Buffers: `data_credits + kControlBuffers` receive buffers and as many send buffers, each
// `message_bytes` long, in one allocation registered with IBV_ACCESS_LOCAL_WRITE only (peers never
// touch them remotely). One SGE per work request.
//
// Credit-based flow control (the endpoint keeps the counters; this file fixes the rules):
//   - A peer may have at most `data_credits` unanswered data messages (request/response fragments)
//     towards us; it learns the number at connect time and spends one credit per fragment.
//   - We repost a receive buffer as soon as its bytes are copied out; the *credit* goes back when
//     the data is consumed: at once for non-final fragments and responses, after the handler
//     returned for the final fragment of a request (so a stalled handler stalls its senders — they
//     wait for credits instead of drawing RNR NAKs).
//   - Returned credits ride on every outgoing message header; when at least
//     data_credits / kCreditReturnDivisor are owed and nothing else goes out, an explicit credit
//     update (header only) is sent. Credit updates consume no credit: they land in the
//     kControlBuffers extra receive buffers. Each update returns >= data_credits/divisor credits of
//     messages whose senders cannot send more until they get them, so at most `divisor` updates
//     are ever unreceived at once; kControlBuffers covers that with a margin.
//
// Not thread-safe: the owning endpoint serializes access under its mutex.
#ifndef RPLASMA_MANAGER_TRANSPORT_VERBS_MESSAGE_RING_H_
#define RPLASMA_MANAGER_TRANSPORT_VERBS_MESSAGE_RING_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"

#include "manager/transport/verbs/verbs_raii.h"

namespace rplasma::transport::verbs {

inline constexpr uint32_t kCreditReturnDivisor = 2;
inline constexpr uint32_t kControlBuffers = 4;
static_assert(kControlBuffers > kCreditReturnDivisor, "credit updates in flight must always find a buffer");

// Work-request ids: kind in the top byte, a slot or read-operation id below.
enum class WrKind : uint8_t { kRecv = 1, kSend = 2, kRead = 3 };
inline uint64_t MakeWrId(WrKind kind, uint64_t value) { return (static_cast<uint64_t>(kind) << 56) | value; }
inline WrKind WrKindOf(uint64_t wr_id) { return static_cast<WrKind>(wr_id >> 56); }
inline uint64_t WrValueOf(uint64_t wr_id) { return wr_id & ((1ull << 56) - 1); }

class MessageRing {
 public:
  static absl::StatusOr<std::unique_ptr<MessageRing>> Create(ibv_pd* pd, uint32_t data_credits, uint32_t message_bytes);
  ~MessageRing();
  MessageRing(const MessageRing&) = delete;
  MessageRing& operator=(const MessageRing&) = delete;

  uint32_t data_credits() const { return data_credits_; }
  uint32_t slots() const { return data_credits_ + kControlBuffers; }  // receive == send slots
  uint32_t message_bytes() const { return message_bytes_; }
  uint32_t credit_threshold() const {
    return data_credits_ / kCreditReturnDivisor > 0 ? data_credits_ / kCreditReturnDivisor : 1;
  }

  uint8_t* recv_buffer(uint32_t slot) { return base_ + static_cast<uint64_t>(slot) * message_bytes_; }
  uint8_t* send_buffer(uint32_t slot) { return base_ + static_cast<uint64_t>(slots() + slot) * message_bytes_; }

  // Posts receive buffer `slot` (wr_id kRecv/slot).
  absl::Status PostRecv(ibv_qp* qp, uint32_t slot);
  // Posts a signaled SEND of the first `length` bytes of send buffer `slot` (wr_id kSend/slot).
  absl::Status PostSend(ibv_qp* qp, uint32_t slot, uint32_t length);

 private:
  MessageRing(uint32_t data_credits, uint32_t message_bytes)
      : data_credits_(data_credits), message_bytes_(message_bytes) {}
  const uint32_t data_credits_;
  const uint32_t message_bytes_;
  uint8_t* base_ = nullptr;  // 2 * slots() buffers, page-aligned, freed after mr_
  MrPtr mr_;
};

}  // namespace rplasma::transport::verbs

#endif  // RPLASMA_MANAGER_TRANSPORT_VERBS_MESSAGE_RING_H_
