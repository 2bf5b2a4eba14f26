// Endpoint hot path: fragmented SENDs under credit flow control, receive reassembly, RDMA READs,
// completion processing. Locking: every counter lives under mu_; posting happens under it too, so
// credits, slots and posted work requests always agree.
#include <algorithm>
#include <cstring>

#include "absl/strings/str_format.h"

#include "manager/transport/verbs/endpoint.h"
#include "protocol/base/logging.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"

namespace rplasma::transport::verbs {
namespace {

absl::Status WcError(const ibv_wc& wc, absl::string_view what) {
  ErrorCode code = ErrorCode::kUnavailable;
  if (wc.status == IBV_WC_REM_ACCESS_ERR || wc.status == IBV_WC_REM_INV_REQ_ERR || wc.status == IBV_WC_LOC_PROT_ERR) {
    code = ErrorCode::kInvalidArgument;  // bad rkey / region outside the peer's MR / bad lkey
  }
  return MakeError(
      code, absl::StrFormat("%s failed: %s (vendor error 0x%x)", what, ibv_wc_status_str(wc.status), wc.vendor_err));
}

constexpr absl::Duration kFlushBound = absl::Seconds(5);

}  // namespace

absl::StatusOr<std::string> Endpoint::Call(absl::string_view request, absl::Time deadline) {
  if (handler_ != nullptr) return MakeError(ErrorCode::kInternal, "Call on a passive verbs endpoint");
  if (request.size() > kMaxCallBytes) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrFormat("request of %u bytes exceeds kMaxCallBytes", request.size()));
  }
  CallTable::Call call;
  uint64_t id;
  {
    MutexLock lock(&mu_);
    if (state_ != State::kConnected) return error_;
    id = calls_.Add(&call);
  }
  absl::Status sent = SendMessage(MessageType::kRequest, 0, id, {request}, deadline);
  MutexLock lock(&mu_);
  if (sent.ok())
    AwaitLocked(
        lock, [&call] { return call.done; }, deadline);
  calls_.Remove(id);
  if (!sent.ok()) return sent;
  if (!call.done) return MakeError(ErrorCode::kDeadlineExceeded, "verbs call: no reply before the deadline");
  return std::move(call.result);
}

absl::Status Endpoint::SendMessage(MessageType type, uint8_t flags, uint64_t request_id,
                                   absl::Span<const absl::string_view> payload, absl::Time deadline) {
  MutexLock lock(&mu_);
  const uint64_t fragment = std::min(ring_->message_bytes(), peer_message_bytes_) - kMessageHeaderBytes;
  uint64_t total = 0;
  for (absl::string_view part : payload) total += part.size();
  uint64_t offset = 0;
  size_t part = 0;     // the part the next fragment starts in...
  size_t part_at = 0;  // ...and where in it
  do {
    // The sender never sends without a credit: wait for one (and for a free send buffer).
    AwaitLocked(
        lock, [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return state_ != State::kConnected || credits_.CanSend(); },
        deadline);
    if (state_ != State::kConnected) return error_;
    if (!credits_.CanSend()) {
      absl::Status late =
          MakeError(ErrorCode::kDeadlineExceeded, "verbs send: no credit from the peer before the deadline");
      // Half a message on the wire would leave the peer reassembling forever: rebuild instead.
      if (offset > 0) FailLocked(late);
      return late;
    }
    uint64_t len = std::min(fragment, total - offset);
    const uint32_t slot = credits_.TakeForMessage();
    MessageHeader h;
    h.type = type;
    h.flags = flags;
    h.credits = credits_.TakeOwed();
    h.request_id = request_id;
    h.total_length = total;
    h.offset = offset;
    uint8_t* buf = ring_->send_buffer(slot);
    EncodeMessageHeader(h, buf);
    for (uint64_t copied = 0; copied < len;) {
      while (part_at == payload[part].size()) {
        ++part;
        part_at = 0;
      }
      const uint64_t n = std::min<uint64_t>(len - copied, payload[part].size() - part_at);
      std::memcpy(buf + kMessageHeaderBytes + copied, payload[part].data() + part_at, n);
      copied += n;
      part_at += n;
    }
    if (absl::Status s = ring_->PostSend(qp(), slot, static_cast<uint32_t>(kMessageHeaderBytes + len)); !s.ok()) {
      credits_.ReturnSlot(slot);
      FailLocked(s);
      return error_;
    }
    ++sends_in_flight_;
    counters_->tx_bytes.fetch_add(kMessageHeaderBytes + len, std::memory_order_relaxed);
    counters_->tx_messages.fetch_add(1, std::memory_order_relaxed);
    offset += len;
  } while (offset < total);
  return absl::OkStatus();
}

void Endpoint::ProcessCompletionLocked(const ibv_wc& wc) {
  const uint64_t value = WrValueOf(wc.wr_id);
  switch (WrKindOf(wc.wr_id)) {
    case WrKind::kRecv: ProcessReceiveLocked(wc); return;
    case WrKind::kSend:
      --sends_in_flight_;
      credits_.ReturnSlot(static_cast<uint32_t>(value));
      if (wc.status != IBV_WC_SUCCESS) FailLocked(WcError(wc, "SEND"));
      return;
    case WrKind::kRead: {
      --reads_in_flight_;
      auto it = read_ops_.find(value);
      if (it != read_ops_.end()) {
        it->second->Completed(wc.status == IBV_WC_SUCCESS ? absl::OkStatus() : WcError(wc, "RDMA READ"));
      }
      if (wc.status != IBV_WC_SUCCESS) FailLocked(WcError(wc, "RDMA READ"));
      return;
    }
  }
  LOG(ERROR) << "verbs: completion with unknown wr_id " << wc.wr_id;
}

void Endpoint::ProcessReceiveLocked(const ibv_wc& wc) {
  const uint32_t slot = static_cast<uint32_t>(WrValueOf(wc.wr_id));
  if (wc.status != IBV_WC_SUCCESS) {
    FailLocked(WcError(wc, "RECV"));
    return;
  }
  counters_->rx_bytes.fetch_add(wc.byte_len, std::memory_order_relaxed);
  counters_->rx_messages.fetch_add(1, std::memory_order_relaxed);
  absl::Span<const uint8_t> message(ring_->recv_buffer(slot), std::min(wc.byte_len, ring_->message_bytes()));
  absl::StatusOr<MessageHeader> h = DecodeMessageHeader(message, kMaxCallBytes);
  if (!h.ok()) {
    FailLocked(h.status());
    return;
  }
  if (absl::Status returned = credits_.Returned(h->credits); !returned.ok()) {
    FailLocked(returned);
    return;
  }
  if (h->type != MessageType::kCredit) DeliverLocked(*h, message.subspan(kMessageHeaderBytes));
  if (state_ != State::kConnected) return;
  // The bytes are copied out: the buffer goes straight back to the receive queue.
  if (absl::Status s = ring_->PostRecv(qp(), slot); !s.ok()) FailLocked(s);
}

void Endpoint::DeliverLocked(const MessageHeader& h, absl::Span<const uint8_t> payload) {
  const bool passive = handler_ != nullptr;
  if (h.type != (passive ? MessageType::kRequest : MessageType::kResponse)) {
    FailLocked(ProtocolError("verbs peer sent a message of the wrong direction"));
    return;
  }
  absl::StatusOr<std::optional<std::string>> whole = inbound_.Add(h, payload);
  if (!whole.ok()) {
    FailLocked(whole.status());
    return;
  }
  if (!whole->has_value()) {
    credits_.Owe();  // a non-final fragment is consumed once copied
    return;
  }
  std::string message = std::move(**whole);
  if (passive) {
    // The final fragment's credit returns after the handler ran (DispatchLoop): back-pressure.
    requests_.push_back({h.request_id, std::move(message)});
    return;
  }
  credits_.Owe();
  // Dropped if its caller gave up.
  if (h.flags & kFlagError) {
    calls_.Complete(h.request_id, MakeError(ErrorCode::kInternal, absl::StrFormat("verbs peer: %s", message)));
  } else {
    calls_.Complete(h.request_id, std::move(message));
  }
}

void Endpoint::MaybeSendCreditLocked() {
  if (state_ != State::kConnected || credits_.owed() < ring_->credit_threshold()) return;
  const std::optional<uint32_t> free_slot = credits_.TakeForCreditMessage();
  if (!free_slot.has_value()) return;
  const uint32_t slot = *free_slot;
  MessageHeader h;
  h.type = MessageType::kCredit;
  h.credits = credits_.TakeOwed();
  EncodeMessageHeader(h, ring_->send_buffer(slot));
  if (absl::Status s = ring_->PostSend(qp(), slot, kMessageHeaderBytes); !s.ok()) {
    credits_.ReturnSlot(slot);
    FailLocked(s);
    return;
  }
  ++sends_in_flight_;
  counters_->tx_bytes.fetch_add(kMessageHeaderBytes, std::memory_order_relaxed);
  counters_->tx_messages.fetch_add(1, std::memory_order_relaxed);
}

absl::Status Endpoint::PostReadLocked(uint64_t op_id, ReadProgress& op, const RemoteRegion& region, uint8_t* dst) {
  const ReadProgress::Chunk chunk = op.Next();
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uint64_t>(dst + chunk.offset);
  sge.length = static_cast<uint32_t>(chunk.length);
  sge.lkey = device_->arena_mr->lkey;
  ibv_send_wr wr{};
  wr.wr_id = MakeWrId(WrKind::kRead, op_id);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = region.addr + chunk.offset;
  wr.wr.rdma.rkey = region.rkey;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(qp(), &wr, &bad); rc != 0) return ErrnoError("ibv_post_send", "RDMA READ", rc);
  op.Posted();
  ++reads_in_flight_;
  return absl::OkStatus();
}

absl::Status Endpoint::Read(const RemoteRegion& region, uint8_t* dst, absl::Time deadline) {
  if (handler_ != nullptr) return MakeError(ErrorCode::kInternal, "Read on a passive verbs endpoint");
  if (region.length == 0) return absl::OkStatus();
  uint8_t* base = devices_->arena_base();
  if (base == nullptr || device_->arena_mr == nullptr) {
    return MakeError(ErrorCode::kInvalidArgument, "verbs read: RegisterArena was not called");
  }
  if (dst < base || dst > base + devices_->arena_size() ||
      region.length > static_cast<uint64_t>(base + devices_->arena_size() - dst)) {
    return MakeError(ErrorCode::kInvalidArgument, "verbs read: destination lies outside the registered arena");
  }
  if (region.addr + region.length < region.addr)
    return MakeError(ErrorCode::kInvalidArgument, "verbs read: region wraps");
  MutexLock lock(&mu_);
  ReadProgress op(region.length, read_chunk_);
  if (state_ != State::kConnected) return error_;
  const uint64_t op_id = next_read_id_++;
  read_ops_[op_id] = &op;
  bool timed_out = false;
  absl::Time flush_limit = absl::InfiniteFuture();
  for (;;) {
    while (!timed_out && state_ == State::kConnected && op.more_to_post() && reads_in_flight_ < read_window_) {
      if (absl::Status s = PostReadLocked(op_id, op, region, dst); !s.ok()) {
        op.Fail(s);
        FailLocked(s);
      }
    }
    const bool posting_over = !op.more_to_post() || state_ != State::kConnected || timed_out;
    if (op.all_back() && posting_over) break;
    if (!timed_out) {
      // Progress: room in the window while chunks remain to be posted, else all READs back (after
      // a failure too: every READ must have completed or flushed before we return).
      auto progress = [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
        if (state_ == State::kConnected && op.more_to_post()) return reads_in_flight_ < read_window_;
        return op.all_back();
      };
      if (!AwaitLocked(lock, progress, deadline)) {
        timed_out = true;
        // READs still out could land after we return: break the QP so they flush first.
        FailLocked(MakeError(ErrorCode::kDeadlineExceeded, "verbs read: deadline passed with READs outstanding"));
        flush_limit = absl::Now() + kFlushBound;
      }
    } else if (!AwaitLocked(
                   lock, [&op] { return op.all_back(); }, flush_limit)) {
      LOG(ERROR) << "verbs read: " << op.outstanding() << " READs did not flush within " << kFlushBound;
      break;
    }
  }
  read_ops_.erase(op_id);
  if (op.succeeded()) {
    // Every READ completed successfully (possibly just as the deadline passed): the bytes are there.
    counters_->reads.fetch_add(1, std::memory_order_relaxed);
    counters_->read_bytes.fetch_add(op.length(), std::memory_order_relaxed);
    return absl::OkStatus();
  }
  if (timed_out) return MakeError(ErrorCode::kDeadlineExceeded, "verbs read: deadline passed");
  if (!op.status().ok()) return op.status();
  return error_;
}

}  // namespace rplasma::transport::verbs
