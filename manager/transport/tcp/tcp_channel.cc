#include "manager/transport/tcp/tcp_channel.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"

#include "manager/transport/tcp/tcp_socket.h"
#include "protocol/base/logging.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"

namespace rplasma::transport::tcp {

absl::StatusOr<std::shared_ptr<TcpChannel>> TcpChannel::Create(UniqueFd fd, std::string peer_address, ArenaView arena,
                                                               std::shared_ptr<TransportCounters> counters,
                                                               absl::Duration retire_after,
                                                               absl::Duration stall_timeout) {
  if (!fd.valid()) return MakeError(ErrorCode::kInvalidArgument, "TcpChannel: invalid fd");
  if (stall_timeout <= absl::ZeroDuration() || retire_after <= absl::ZeroDuration()) {
    return MakeError(ErrorCode::kInvalidArgument, "TcpChannel: retire_after and stall_timeout must be positive");
  }
  std::shared_ptr<TcpChannel> channel(new TcpChannel(std::move(fd), std::move(peer_address), arena, std::move(counters),
                                                     std::min(retire_after, stall_timeout), stall_timeout));
  channel->counters_->connections.fetch_add(1, std::memory_order_relaxed);
  return channel;
}

TcpChannel::TcpChannel(UniqueFd fd, std::string peer_address, ArenaView arena,
                       std::shared_ptr<TransportCounters> counters, absl::Duration retire_after,
                       absl::Duration stall_timeout)
    : fd_(std::move(fd)),
      peer_address_(std::move(peer_address)),
      arena_(arena),
      counters_(std::move(counters)),
      retire_after_(retire_after),
      stall_timeout_(stall_timeout),
      last_progress_ns_(absl::ToUnixNanos(absl::Now())),
      demux_(ReplyDemultiplexer::Hooks{
          .on_break = [this](const absl::Status& reason) { return OnBreak(reason); },
          .expired =
              [this](uint64_t request_id) {
                return MakeError(ErrorCode::kDeadlineExceeded,
                                 absl::StrCat("request ", request_id, " to ", peer_address_,
                                              ": deadline exceeded (a late reply is discarded)"));
              },
          // ReadOneReply times out only at a reply boundary, and discards replies of abandoned ids.
          .on_deadline = ReplyDemultiplexer::OnDeadline::kAbandonWaiter,
      }) {}

TcpChannel::~TcpChannel() { Close(); }

void TcpChannel::Close() {
  // The shutdown in OnBreak makes the leader's recv() fail.
  demux_.BreakAndWaitForLeader(
      MakeError(ErrorCode::kUnavailable, absl::StrCat("channel to ", peer_address_, " closed")));
}

void TcpChannel::NoteProgress() { last_progress_ns_.store(absl::ToUnixNanos(absl::Now()), std::memory_order_relaxed); }

bool TcpChannel::SilentFor(absl::Duration quiet, absl::Time now) const {
  if (outstanding_.load(std::memory_order_acquire) <= 0) return false;
  return now - absl::FromUnixNanos(last_progress_ns_.load(std::memory_order_relaxed)) >= quiet;
}

bool TcpChannel::StalledAt(absl::Time now) const { return SilentFor(stall_timeout_, now); }

bool TcpChannel::healthy() const {
  if (closed_flag_.load(std::memory_order_acquire)) return false;
  const bool replies_due = outstanding_.load(std::memory_order_acquire) > 0;
  // With requests outstanding a leader reads the socket and sees a close first. (A peek would
  // also wait for the socket while that leader copies a reply out of it.)
  if (replies_due && !SilentFor(retire_after_, absl::Now())) return true;
  char byte;
  const ssize_t n = ::recv(fd_.get(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  // Replies are overdue. Unless one is waiting unread (its callers left at their deadlines and
  // nobody leads), the peer or the path to it is stuck, and new requests go to a fresh
  // connection: TCP's backed-off retransmissions can keep this one silent for many seconds after
  // the path heals. The requests in flight here keep their chance until the stall timeout.
  if (replies_due) return n > 0;
  // Nobody reads an idle channel: a peer that closed it (or reset it) shows here, not buffered data.
  if (n == 0) return false;
  return n > 0 || errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

absl::Status TcpChannel::OnBreak(const absl::Status& reason) {
  closed_flag_.store(true, std::memory_order_release);
  // Wakes a leader blocked in recv() (and any blocked sender); the fd is closed on destruction.
  ::shutdown(fd_.get(), SHUT_RDWR);
  counters_->connections.fetch_sub(1, std::memory_order_relaxed);
  return MakeError(ErrorCode::kUnavailable,
                   absl::StrCat("tcp channel to ", peer_address_, " failed: ", reason.message()));
}

absl::Status TcpChannel::Execute(Pending& p, TcpHeader header, const void* payload, size_t payload_bytes,
                                 absl::Time deadline) {
  header.request_id = next_request_id_.fetch_add(1, std::memory_order_relaxed);
  if (absl::Status registered = demux_.Register(header.request_id, &p); !registered.ok()) {
    return MakeError(ErrorCode::kUnavailable,
                     absl::StrCat("tcp channel to ", peer_address_, " is closed: ", registered.message()));
  }
  // The stall clock starts when an idle channel gets a request; it is not reset by later requests.
  if (outstanding_.fetch_add(1, std::memory_order_acq_rel) == 0) NoteProgress();
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
    outstanding_.fetch_sub(1, std::memory_order_acq_rel);  // no reply will come for it
    // The channel failed meanwhile: that status; else ours.
    return demux_.Withdraw(
        &p, MakeError(ErrorCode::kDeadlineExceeded,
                      absl::StrCat("request to ", peer_address_, ": deadline exceeded before it was sent")));
  }
  // Part of the request may be on the wire: the stream position is lost.
  if (!sent.ok()) return demux_.Abort(&p, sent);
  counters_->tx_bytes.fetch_add(kTcpHeaderBytes + payload_bytes);
  counters_->tx_messages.fetch_add(1);
  return demux_.Wait(&p, deadline, [this](absl::Time read_deadline) {
    absl::Status read = ReadOneReply(read_deadline);
    // A timeout is the waiter's own business; a closed channel was already reported.
    if (!read.ok() && ErrorCodeOf(read) != ErrorCode::kDeadlineExceeded &&
        !closed_flag_.load(std::memory_order_acquire)) {
      LOG(WARNING) << "tcp channel to " << peer_address_ << ": " << read.message();
    }
    return read;
  });
}

absl::StatusOr<std::string> TcpChannel::Call(absl::string_view request, absl::Time deadline) {
  if (request.size() > kMaxCallBytes) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat("Call of ", request.size(), " bytes exceeds kMaxCallBytes (", kMaxCallBytes, ")"));
  }
  Pending p;
  p.expect = TcpKind::kCallReply;
  p.deadline = deadline;
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
  p.deadline = deadline;
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

absl::StatusOr<size_t> TcpChannel::ReceiveSome(void* dst, size_t size, absl::Time until) {
  const absl::Time stall_at = absl::FromUnixNanos(last_progress_ns_.load(std::memory_order_relaxed)) + stall_timeout_;
  absl::StatusOr<size_t> got = rx_.ReadSome(fd_.get(), dst, size, std::min(until, stall_at));
  if (got.ok()) {
    NoteProgress();
    return got;
  }
  if (ErrorCodeOf(got.status()) == ErrorCode::kDeadlineExceeded && StalledAt(absl::Now())) {
    return MakeError(ErrorCode::kUnavailable,
                     absl::StrCat("peer stalled: no reply byte for ", absl::FormatDuration(stall_timeout_), " while ",
                                  outstanding_.load(), " requests are outstanding"));
  }
  return got.status();  // kDeadlineExceeded: `until` passed, nothing consumed
}

absl::Status TcpChannel::ReadOneReply(absl::Time deadline) {
  Inbound& in = inbound_;
  while (in.header_bytes < kTcpHeaderBytes) {
    ASSIGN_OR_RETURN(size_t got, ReceiveSome(in.header + in.header_bytes, kTcpHeaderBytes - in.header_bytes, deadline));
    in.header_bytes += got;
  }
  if (!in.started) {
    RETURN_IF_ERROR(StartReply());
  } else if (in.unclaimed) {
    // A leader stopped mid-reply: its waiter still waits (resume into it) or gave up (drop the rest).
    ASSIGN_OR_RETURN(ReplyWaiter * again,
                     demux_.Claim(in.parsed.request_id, [](const ReplyWaiter&) { return absl::OkStatus(); }));
    in.target = static_cast<Pending*>(again);
    in.unclaimed = false;
  }
  while (in.payload_bytes < in.parsed.length) {
    Pending* target = in.target;
    const absl::Time until = target != nullptr ? std::min(deadline, target->deadline) : deadline;
    auto [dst, room] = PayloadSpace();
    absl::StatusOr<size_t> got = ReceiveSome(dst, room, until);
    if (got.ok()) {
      in.payload_bytes += *got;
      continue;
    }
    if (ErrorCodeOf(got.status()) != ErrorCode::kDeadlineExceeded) {
      if (!closed_flag_.load(std::memory_order_acquire)) {
        LOG(WARNING) << "tcp channel to " << peer_address_ << ": " << got.status().message();
      }
      if (target != nullptr) {
        // Breaks the channel before the waiter can run: once it sees its failure the channel is unhealthy.
        demux_.Finish(target,
                      MakeError(ErrorCode::kUnavailable, absl::StrCat("tcp channel to ", peer_address_,
                                                                      " lost mid-reply: ", got.status().message())),
                      /*break_cause=*/got.status());
      }
      return got.status();
    }
    if (absl::Now() < deadline) {
      // The target's deadline passed, not ours: it leaves now; the rest of its reply is dropped.
      if (target != nullptr) demux_.Unclaim(target, /*expired=*/true);
      in.target = nullptr;
      continue;
    }
    // Our own deadline passed: stop here; the next leader resumes this reply.
    if (target != nullptr) {
      demux_.Unclaim(target, /*expired=*/false);
      in.target = nullptr;
      in.unclaimed = true;
    }
    return got.status();
  }
  FinishReply();
  return absl::OkStatus();
}

absl::Status TcpChannel::StartReply() {
  Inbound& in = inbound_;
  ASSIGN_OR_RETURN(in.parsed, ParseTcpHeader(in.header, TcpDirection::kReply));
  const TcpHeader& header = in.parsed;
  ASSIGN_OR_RETURN(ReplyWaiter * claimed, demux_.Claim(header.request_id, [&](const ReplyWaiter& w) {
    const Pending& q = static_cast<const Pending&>(w);
    if (header.kind != TcpKind::kError && header.kind != q.expect) {
      return ProtocolError(
          absl::StrCat("reply kind ", static_cast<int>(header.kind), " does not match request ", header.request_id));
    }
    if (header.kind == TcpKind::kReadData && header.length != q.length) {
      return ProtocolError(absl::StrCat("read reply of ", header.length, " bytes for a request of ", q.length));
    }
    return absl::OkStatus();
  }));
  // The reply of an abandoned request is read off the stream and dropped. No Read asks for more
  // than our arena holds, so a longer one is a lie.
  if (claimed == nullptr && header.kind == TcpKind::kReadData && header.length > arena_.size) {
    return ProtocolError(absl::StrCat("late read reply of ", header.length, " bytes exceeds the arena"));
  }
  in.started = true;
  in.target = static_cast<Pending*>(claimed);
  // Without the lock: the waiter does not touch *target while it is claimed.
  if (in.target != nullptr && header.kind == TcpKind::kCallReply) in.target->reply.resize(header.length);
  if (header.kind == TcpKind::kError) in.error_text.resize(header.length);
  return absl::OkStatus();
}

std::pair<uint8_t*, size_t> TcpChannel::PayloadSpace() {
  constexpr size_t kScratchBytes = 64 << 10;
  Inbound& in = inbound_;
  const uint64_t left = in.parsed.length - in.payload_bytes;
  if (in.parsed.kind == TcpKind::kError) {
    return {reinterpret_cast<uint8_t*>(in.error_text.data()) + in.payload_bytes, left};
  }
  if (in.target != nullptr) {
    uint8_t* base =
        in.parsed.kind == TcpKind::kCallReply ? reinterpret_cast<uint8_t*>(in.target->reply.data()) : in.target->dst;
    return {base + in.payload_bytes, left};
  }
  if (scratch_ == nullptr) scratch_.reset(new uint8_t[kScratchBytes]);
  return {scratch_.get(), std::min<uint64_t>(left, kScratchBytes)};
}

void TcpChannel::FinishReply() {
  Inbound in = std::move(inbound_);
  inbound_ = Inbound{};
  outstanding_.fetch_sub(1, std::memory_order_acq_rel);
  // Counted before the waiter can return, so its caller sees them.
  counters_->rx_bytes.fetch_add(kTcpHeaderBytes + in.parsed.length);
  counters_->rx_messages.fetch_add(1);
  if (in.target == nullptr) return;
  absl::Status status;
  if (in.parsed.kind == TcpKind::kError) {
    ErrorCode code = in.parsed.status > 0xffff ? ErrorCode::kProtocolError
                                               : ErrorCodeFromWire(static_cast<uint16_t>(in.parsed.status));
    if (code == ErrorCode::kOk) code = ErrorCode::kProtocolError;
    status = MakeError(code, absl::StrCat("peer ", peer_address_, ": ", in.error_text));
  }
  demux_.Finish(in.target, std::move(status));
}

}  // namespace rplasma::transport::tcp
