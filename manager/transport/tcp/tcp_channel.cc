#include "manager/transport/tcp/tcp_channel.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "manager/transport/tcp/tcp_socket.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/logging.h"
#include "protocol/base/status.h"

namespace rplasma::transport::tcp {

absl::StatusOr<std::shared_ptr<TcpChannel>> TcpChannel::Create(UniqueFd fd, std::string peer_address,
                                                               ArenaView arena,
                                                               std::shared_ptr<TransportCounters> counters) {
  if (!fd.valid()) return MakeError(ErrorCode::kInvalidArgument, "TcpChannel: invalid fd");
  std::shared_ptr<TcpChannel> channel(
      new TcpChannel(std::move(fd), std::move(peer_address), arena, std::move(counters)));
  channel->counters_->connections.fetch_add(1, std::memory_order_relaxed);
  return channel;
}

TcpChannel::TcpChannel(UniqueFd fd, std::string peer_address, ArenaView arena,
                       std::shared_ptr<TransportCounters> counters)
    : fd_(std::move(fd)), peer_address_(std::move(peer_address)), arena_(arena), counters_(std::move(counters)) {}

TcpChannel::~TcpChannel() { Close(); }

void TcpChannel::Close() {
  MutexLock lock(&mu_);
  FailLocked(MakeError(ErrorCode::kUnavailable, absl::StrCat("channel to ", peer_address_, " closed")));
  while (reading_) lock.Wait(&leader_gone_);  // the shutdown makes the leader's recv() fail
}

bool TcpChannel::healthy() const {
  if (closed_flag_.load(std::memory_order_acquire)) return false;
  // Nobody reads an idle channel: a peer that closed it (or reset it) shows here, not buffered data.
  char byte;
  const ssize_t n = ::recv(fd_.get(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) return false;
  return n > 0 || errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

void TcpChannel::StopLeadingLocked(bool hand_over) {
  reading_ = false;
  leader_gone_.SignalAll();
  if (!hand_over || closed_) return;
  // Hand the socket to a waiter. One that is still sending will lead when it comes to wait.
  for (const auto& [id, q] : pending_) {
    if (!q->done) {
      q->cv.Signal();
      return;
    }
  }
}

void TcpChannel::FailLocked(const absl::Status& reason) {
  if (closed_) return;
  closed_ = true;
  closed_flag_.store(true, std::memory_order_release);
  close_reason_ = reason;
  absl::Status failed = MakeError(
      ErrorCode::kUnavailable, absl::StrCat("tcp channel to ", peer_address_, " failed: ", reason.message()));
  for (auto it = pending_.begin(); it != pending_.end();) {
    Pending* p = it->second;
    if (!p->idle) {  // the leader finishes this one (its recv fails once the socket is down)
      ++it;
      continue;
    }
    p->status = failed;
    p->done = true;
    p->cv.Signal();
    pending_.erase(it++);
  }
  // Wakes a leader blocked in recv() (and any blocked sender); the fd is closed on destruction.
  ::shutdown(fd_.get(), SHUT_RDWR);
  counters_->connections.fetch_sub(1, std::memory_order_relaxed);
}

absl::Status TcpChannel::Execute(Pending& p, TcpHeader header, const void* payload, size_t payload_bytes,
                                 absl::Time deadline) {
  {
    MutexLock lock(&mu_);
    if (closed_) {
      return MakeError(ErrorCode::kUnavailable,
                       absl::StrCat("tcp channel to ", peer_address_, " is closed: ", close_reason_.message()));
    }
    header.request_id = next_request_id_.fetch_add(1, std::memory_order_relaxed);
    pending_[header.request_id] = &p;
  }
  header.length = payload_bytes;
  uint8_t encoded[kTcpHeaderBytes];
  EncodeTcpHeader(header, encoded);
  iovec iov[2] = {{encoded, kTcpHeaderBytes}, {const_cast<void*>(payload), payload_bytes}};
  absl::Status sent;
  bool expired_unsent = false;
  {
    MutexLock write_lock(&write_mu_);
    // Waiting for the writer ahead of us may have used up our deadline: then give up cleanly,
    // before any byte of this request is on the wire (the channel stays usable).
    if (absl::Now() >= deadline) {
      expired_unsent = true;
    } else {
      sent = SendAll(fd_.get(), iov, 2, deadline);
    }
  }
  if (expired_unsent) {
    MutexLock lock(&mu_);
    pending_.erase(header.request_id);
    if (p.done) return p.status;  // the channel failed meanwhile
    return MakeError(ErrorCode::kDeadlineExceeded,
                     absl::StrCat("request to ", peer_address_, ": deadline exceeded before it was sent"));
  }
  if (sent.ok()) {
    counters_->tx_bytes.fetch_add(kTcpHeaderBytes + payload_bytes);
    counters_->tx_messages.fetch_add(1);
  }

  MutexLock lock(&mu_);
  if (!sent.ok()) {
    // Part of the request may be on the wire: the stream position is lost.
    FailLocked(sent);
    while (!p.idle) lock.Wait(&p.cv);
    pending_.erase(header.request_id);
    if (p.done && p.status.ok()) return absl::OkStatus();  // completed in the race: the data is good
    return sent;
  }
  const absl::Status expired = MakeError(
      ErrorCode::kDeadlineExceeded,
      absl::StrCat("request ", header.request_id, " to ", peer_address_, ": deadline exceeded; channel closed"));
  // Waits use per-Pending CondVars, each predicate checked by its own waiter after the wake-up.
  while (!p.done) {
    if (!reading_ && !closed_) {
      // Lead: read replies (ours or others') until ours is in.
      reading_ = true;
      lock.Unlock();
      absl::Status read = ReadOneReply(deadline);
      lock.Lock();
      if (read.ok()) {
        StopLeadingLocked(/*hand_over=*/p.done);  // not done: ours is still to read, lead on
        continue;
      }
      const bool timed_out = ErrorCodeOf(read) == ErrorCode::kDeadlineExceeded;
      if (!closed_ && !timed_out) LOG(WARNING) << "tcp channel to " << peer_address_ << ": " << read.message();
      FailLocked(timed_out ? expired : read);  // every Pending is idle now: FailLocked ends ours
      StopLeadingLocked(/*hand_over=*/true);
      pending_.erase(header.request_id);
      if (p.done && p.status.ok()) return absl::OkStatus();
      return timed_out ? expired : p.status;
    }
    // Someone else leads (and may complete ours), or nobody does and the channel is closed.
    if (lock.WaitWithDeadline(&p.cv, deadline) && !p.done) {
      // The reply may still be in flight: the stream position is lost.
      FailLocked(expired);
      while (!p.idle) lock.Wait(&p.cv);
      pending_.erase(header.request_id);
      if (p.done && p.status.ok()) return absl::OkStatus();  // completed in the race: the data is good
      return expired;
    }
  }
  return p.status;
}

absl::StatusOr<std::string> TcpChannel::Call(absl::string_view request, absl::Time deadline) {
  if (request.size() > kMaxCallBytes) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat("Call of ", request.size(), " bytes exceeds kMaxCallBytes (", kMaxCallBytes, ")"));
  }
  Pending p;
  p.expect = TcpKind::kCallReply;
  TcpHeader header;
  header.kind = TcpKind::kCall;
  absl::Status s = Execute(p, header, request.data(), request.size(), deadline);
  if (!s.ok()) {
    counters_->errors.fetch_add(1);
    return s;
  }
  return std::move(p.reply);
}

absl::Status TcpChannel::Read(const RemoteRegion& region, uint8_t* dst, absl::Time deadline) {
  if (!arena_.registered()) {
    return MakeError(ErrorCode::kInvalidArgument, "Read: no arena was registered before Connect");
  }
  uint64_t dst_offset = static_cast<uint64_t>(dst - arena_.base);
  if (dst < arena_.base || !arena_.ContainsRange(dst_offset, region.length)) {
    return MakeError(ErrorCode::kInvalidArgument, "Read: destination is not inside the registered arena");
  }
  if (region.length == 0) return absl::OkStatus();
  Pending p;
  p.expect = TcpKind::kReadData;
  p.dst = dst;
  p.length = region.length;
  uint8_t request[kReadRequestBytes];
  EncodeReadRequest(region.addr, region.length, request);
  TcpHeader header;
  header.kind = TcpKind::kRead;
  absl::Status s = Execute(p, header, request, sizeof(request), deadline);
  if (!s.ok()) {
    counters_->errors.fetch_add(1);
    return s;
  }
  counters_->reads.fetch_add(1);
  counters_->read_bytes.fetch_add(region.length);
  return absl::OkStatus();
}

absl::Status TcpChannel::ReadOneReply(absl::Time deadline) {
  uint8_t encoded[kTcpHeaderBytes];
  RETURN_IF_ERROR(rx_.ReadExact(fd_.get(), encoded, sizeof(encoded), deadline));
  ASSIGN_OR_RETURN(TcpHeader header, ParseTcpHeader(encoded, TcpDirection::kReply));
  Pending* p = nullptr;
  {
    MutexLock lock(&mu_);
    auto it = pending_.find(header.request_id);
    if (it == pending_.end()) {
      return ProtocolError(absl::StrCat("reply for unknown request id ", header.request_id));
    }
    p = it->second;
    if (header.kind != TcpKind::kError && header.kind != p->expect) {
      return ProtocolError(absl::StrCat("reply kind ", static_cast<int>(header.kind), " does not match request ",
                                        header.request_id));
    }
    if (header.kind == TcpKind::kReadData && header.length != p->length) {
      return ProtocolError(absl::StrCat("read reply of ", header.length, " bytes for a request of ", p->length));
    }
    p->idle = false;
  }
  // Without mu_: the waiter does not touch *p while `idle` is false.
  absl::Status received;
  std::string error_text;
  switch (header.kind) {
    case TcpKind::kCallReply:
      p->reply.resize(header.length);
      received = rx_.ReadExact(fd_.get(), p->reply.data(), header.length, deadline);
      break;
    case TcpKind::kReadData:
      received = rx_.ReadExact(fd_.get(), p->dst, header.length, deadline);
      break;
    default:
      error_text.resize(header.length);
      received = rx_.ReadExact(fd_.get(), error_text.data(), header.length, deadline);
      break;
  }
  MutexLock lock(&mu_);
  p->idle = true;
  pending_.erase(header.request_id);
  p->done = true;
  p->cv.Signal();
  if (!received.ok()) {
    p->status = MakeError(ErrorCode::kUnavailable, absl::StrCat("tcp channel to ", peer_address_,
                                                                " lost mid-reply: ", received.message()));
    // Close before the waiter can run: once it sees its failure the channel is already unhealthy.
    if (!closed_) LOG(WARNING) << "tcp channel to " << peer_address_ << ": " << received.message();
    FailLocked(received);
    return received;
  }
  counters_->rx_bytes.fetch_add(kTcpHeaderBytes + header.length);
  counters_->rx_messages.fetch_add(1);
  if (header.kind == TcpKind::kError) {
    ErrorCode code = header.status > 0xffff ? ErrorCode::kProtocolError
                                            : ErrorCodeFromWire(static_cast<uint16_t>(header.status));
    if (code == ErrorCode::kOk) code = ErrorCode::kProtocolError;
    p->status = MakeError(code, absl::StrCat("peer ", peer_address_, ": ", error_text));
  } else {
    p->status = absl::OkStatus();
  }
  return absl::OkStatus();
}

}  // namespace rplasma::transport::tcp
