#include "store/store_server.h"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

#include "protocol/base/logging.h"
#include "protocol/base/socket_io.h"
#include "protocol/frame.h"

namespace rplasma {
namespace {

constexpr uint64_t kListenTag = 1;
constexpr uint64_t kSignalTag = 2;
constexpr uint64_t kWakeTag = 3;
constexpr size_t kReadBudget = 256 * 1024;  // per client per wakeup

}  // namespace

StoreServer::StoreServer(StoreOptions options, std::unique_ptr<Arena> arena, std::unique_ptr<SharedIndex> index)
    : options_(std::move(options)),
      arena_(std::move(arena)),
      index_(std::move(index)),
      table_(
          arena_->size(), static_cast<uint64_t>(absl::GetCurrentTimeNanos()),
          [this](EventKind kind, const ObjectInfo& info) { OnEvent(kind, info); }, index_.get()),
      partial_frames_(options_.partial_frame_timeout),
      uid_(::geteuid()) {}

absl::StatusOr<std::unique_ptr<StoreServer>> StoreServer::Create(const StoreOptions& options) {
  RETURN_IF_ERROR(options.Validate());
  ASSIGN_OR_RETURN(std::unique_ptr<Arena> arena, Arena::Create(options.memory_bytes, options.hugepages));
  std::unique_ptr<SharedIndex> index;
  const uint64_t entries = options.index_entries.value_or(SharedIndex::DefaultEntries(arena->size()));
  if (entries != 0) {
    ASSIGN_OR_RETURN(index, SharedIndex::Create(entries, options.slots_per_client));
  }
  std::unique_ptr<StoreServer> server(new StoreServer(options, std::move(arena), std::move(index)));
  RETURN_IF_ERROR(server->Init());
  StoreServer* s = server.get();
  ASSIGN_OR_RETURN(server->metrics_exporter_,
                   MetricsExporter::Start(
                       options.metrics, [s] { return s->metrics_.Render(s->options_.name); }, options.name));
  return server;
}

absl::Status StoreServer::Init() {
  RETURN_IF_ERROR(PrepareSocketDirectory(options_.socket_path, "socket"));
  // UnixListen replaces a stale socket file; a live one belongs to a running store: keep off it.
  if (UnixConnect(options_.socket_path).ok()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat("socket ", options_.socket_path, " is in use by another running store"));
  }
  ASSIGN_OR_RETURN(listen_fd_, UnixListen(options_.socket_path));
  if (::chmod(options_.socket_path.c_str(), 0600) != 0) return ErrnoError("chmod", options_.socket_path, errno);
  RETURN_IF_ERROR(SetNonBlocking(listen_fd_.get()));
  epoll_fd_.reset(::epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_fd_) return ErrnoError("epoll_create1", "store", errno);
  wake_fd_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_fd_) return ErrnoError("eventfd", "store", errno);
  auto add = [&](int fd, uint64_t tag) -> absl::Status {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    if (::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) return ErrnoError("epoll_ctl", "ADD", errno);
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(add(listen_fd_.get(), kListenTag));
  RETURN_IF_ERROR(add(wake_fd_.get(), kWakeTag));
  if (options_.handle_signals) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    if (::pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0) return ErrnoError("pthread_sigmask", "SIGTERM", errno);
    signal_fd_.reset(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!signal_fd_) return ErrnoError("signalfd", "SIGTERM/SIGINT", errno);
    RETURN_IF_ERROR(add(signal_fd_.get(), kSignalTag));
  }
  LOG(INFO) << options_.name << ": listening on " << options_.socket_path << ", arena " << arena_->size()
            << " bytes (memfd" << (options_.hugepages.enabled ? ", huge pages of " : ", pages of ")
            << arena_->page_size() << " bytes)";
  return absl::OkStatus();
}

StoreServer::~StoreServer() {
  std::vector<ClientId> ids;
  for (const auto& [id, s] : sessions_) ids.push_back(id);
  for (ClientId id : ids) CloseSession(id);
  if (listen_fd_) ::unlink(options_.socket_path.c_str());
}

void StoreServer::Shutdown() {
  uint64_t one = 1;
  ssize_t ignored = ::write(wake_fd_.get(), &one, sizeof(one));
  (void)ignored;
}

namespace {
// Slot references change with no message to the store: the loop wakes at least this often to
// count them for the metrics, and counts them at most this often.
constexpr int kSlotSampleWakeMs = 1000;
constexpr absl::Duration kSlotSampleInterval = absl::Milliseconds(100);
}  // namespace

absl::Status StoreServer::Run() {
  epoll_event events[64];
  metrics_.Publish(Stats());
  while (!stopping_) {
    int timeout_ms = -1;
    std::optional<absl::Time> next = waiters_.NextDeadline();
    if (std::optional<absl::Time> partial = partial_frames_.NextDeadline()) {
      next = next.has_value() ? std::min(*next, *partial) : *partial;
    }
    if (next.has_value()) {
      absl::Duration left = *next - absl::Now();
      timeout_ms = left <= absl::ZeroDuration()
                       ? 0
                       : static_cast<int>(std::min<int64_t>(
                             absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))), 1 << 30));
    }
    if (index_ != nullptr && (timeout_ms < 0 || timeout_ms > kSlotSampleWakeMs)) timeout_ms = kSlotSampleWakeMs;
    int n = ::epoll_wait(epoll_fd_.get(), events, 64, timeout_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("epoll_wait", "store", errno);
    }
    const absl::Time now = absl::Now();
    for (int i = 0; i < n; ++i) {
      uint64_t tag = events[i].data.u64;
      if (tag == kListenTag) {
        AcceptAll();
      } else if (tag == kSignalTag) {
        HandleSignal();
      } else if (tag == kWakeTag) {
        stopping_ = true;
      } else {
        HandleClient(tag, events[i].events, now);
      }
    }
    table_.DrainAccesses();  // a load per client when nothing was read
    ExpireGets();
    ExpirePartialFrames(now);
    FlushDirty(now);
    CloseDoomed();
    if (index_ != nullptr && now - slots_sampled_at_ >= kSlotSampleInterval) {
      slot_references_sample_ = index_->SlotReferences();
      slots_sampled_at_ = now;
    }
    metrics_.Publish(StatsWithSlots(slot_references_sample_));  // O(1) but for the sample's scan
  }
  LOG(INFO) << options_.name << ": shutting down (" << sessions_.size() << " clients connected)";
  return absl::OkStatus();
}

void StoreServer::HandleSignal() {
  signalfd_siginfo info;
  while (::read(signal_fd_.get(), &info, sizeof(info)) == sizeof(info)) {
    LOG(INFO) << options_.name << ": signal " << info.ssi_signo << " received";
    stopping_ = true;
  }
}

void StoreServer::AcceptAll() {
  for (;;) {
    UniqueFd fd(::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE) {
        // Out of fds: stop watching the listener (level-triggered, it would spin) until a client leaves.
        LOG(ERROR) << "accept: " << ErrnoError("accept4", options_.socket_path, errno).message()
                   << "; pausing accepts until a client disconnects";
        epoll_event ev{};
        ev.data.u64 = kListenTag;
        ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_MOD, listen_fd_.get(), &ev);
        accept_paused_ = true;
      }
      return;
    }
    absl::StatusOr<PeerCredentials> cred = GetPeerCredentials(fd.get());
    if (!cred.ok()) {
      LOG(WARNING) << "refusing a connection: " << cred.status().message();
      continue;
    }
    if (cred->uid != uid_) {
      LOG(WARNING) << "refusing a connection from pid " << cred->pid << " uid " << cred->uid
                   << ": the store runs as uid " << uid_;
      continue;  // fd closes here
    }
    ClientId id = next_client_id_++;
    auto session = std::make_unique<ClientSession>(id, std::move(fd), cred->pid, options_.max_frame_bytes);
    ClientSession& s = *session;
    sessions_.emplace(id, std::move(session));
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = id;
    if (::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, s.fd(), &ev) != 0) {
      LOG(ERROR) << ErrnoError("epoll_ctl", "ADD client", errno).message();
      sessions_.erase(id);
      continue;
    }
    s.epoll_events = EPOLLIN;
  }
}

ClientSession* StoreServer::FindSession(ClientId id) {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second.get();
}

void StoreServer::HandleClient(ClientId id, uint32_t events, absl::Time now) {
  ClientSession* s = FindSession(id);
  if (s == nullptr || s->doomed) return;
  // EPOLLHUP/ERR are reported even while input is paused: a flush then finds the peer gone.
  if ((events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) != 0) MarkDirty(*s);
  if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0 && !s->input_paused) {
    absl::Status read = s->ReadAvailable(kReadBudget);
    // Requests that arrived before an EOF are still handled (a client may release and leave).
    ProcessFrames(*s);
    if (!read.ok() && !s->doomed) {
      Doom(*s, std::string(read.message()));
    }
    TrackPartialFrame(*s, now);
  }
}

void StoreServer::TrackPartialFrame(ClientSession& s, absl::Time now) {
  if (s.doomed || s.input_paused) {
    // Doomed: CloseSession forgets it. Paused: the store stopped reading, not the client.
    partial_frames_.Remove(s.id());
    return;
  }
  partial_frames_.Update(s.id(), s.buffered_bytes(), s.frames_completed(), now);
  while (partial_frames_.total_bytes() > options_.max_partial_frame_bytes) {
    std::optional<ClientId> largest = partial_frames_.Largest();
    ClientSession* offender = largest.has_value() ? FindSession(*largest) : nullptr;
    if (offender == nullptr) break;  // cannot happen: tracked sessions exist
    Doom(*offender,
         absl::StrCat("incomplete frames of all clients over --max_partial_frame_bytes (",
                      options_.max_partial_frame_bytes, "); this client held ", offender->buffered_bytes(), " bytes"));
    partial_frames_.Remove(*largest);
  }
}

void StoreServer::ExpirePartialFrames(absl::Time now) {
  for (ClientId id : partial_frames_.Expired(now)) {
    partial_frames_.Remove(id);
    ClientSession* s = FindSession(id);
    if (s == nullptr || s->doomed) continue;
    Doom(*s, absl::StrCat("a started frame was not completed within --partial_frame_timeout (",
                          absl::FormatDuration(options_.partial_frame_timeout), "; ", s->buffered_bytes(),
                          " bytes buffered)"));
  }
}

void StoreServer::ProcessFrames(ClientSession& s) {
  while (!s.doomed && !s.input_paused) {
    absl::StatusOr<std::optional<std::string>> frame = s.NextFrame();
    if (!frame.ok()) {
      SendReply(s, ErrorReply(0, frame.status()));
      Doom(s, std::string(frame.status().message()));
      return;
    }
    if (!frame->has_value()) return;
    uint64_t request_id = 0;
    absl::StatusOr<Request> request = DecodeRequest(**frame, &request_id);
    if (!request.ok()) {
      SendReply(s, ErrorReply(request_id, request.status()));
      // Bytes that are not a request end the connection; a well-formed request with values out
      // of bounds (too many ids, a Put above the inline limit...) is only answered with the error.
      if (ErrorCodeOf(request.status()) == ErrorCode::kProtocolError) {
        Doom(s, std::string(request.status().message()));
        return;
      }
      continue;
    }
    HandleRequest(s, *std::move(request));
    if (s.queued_bytes() > options_.pause_input_bytes && !s.input_paused) {
      s.input_paused = true;
      UpdateInterest(s);
    }
  }
}

void StoreServer::SendReply(ClientSession& s, const Reply& reply, std::vector<int> fds_to_attach) {
  s.Enqueue(EncodeFrame(EncodeReply(reply)), std::move(fds_to_attach));
  MarkDirty(s);
  // Input pauses long before this; only answers the client did not pace (completions of many
  // waiting Gets) can get here.
  if (s.queued_bytes() > options_.max_output_bytes) Doom(s, "output queue over --max_output_bytes");
}

void StoreServer::UpdateInterest(ClientSession& s) {
  uint32_t want = (s.input_paused ? 0u : static_cast<uint32_t>(EPOLLIN)) |
                  (s.queued_bytes() > 0 ? static_cast<uint32_t>(EPOLLOUT) : 0u);
  if (want == s.epoll_events) return;
  epoll_event ev{};
  ev.events = want;
  ev.data.u64 = s.id();
  if (::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_MOD, s.fd(), &ev) != 0) {
    Doom(s, std::string(ErrnoError("epoll_ctl", "MOD client", errno).message()));
    return;
  }
  s.epoll_events = want;
}

void StoreServer::FlushDirty(absl::Time now) {
  // Flushing can resume paused input, whose requests can dirty further sessions: loop until quiet.
  while (!dirty_.empty()) {
    ClientId id = *dirty_.begin();
    dirty_.erase(dirty_.begin());
    ClientSession* s = FindSession(id);
    if (s == nullptr || s->doomed) continue;
    absl::Status flushed = s->Flush();
    if (!flushed.ok()) {
      Doom(*s, std::string(flushed.message()));
      continue;
    }
    if (s->backfilling) PumpBackfill(*s);
    if (s->input_paused && s->queued_bytes() <= options_.pause_input_bytes / 2) {
      s->input_paused = false;
      ProcessFrames(*s);  // frames already buffered get no new EPOLLIN
      TrackPartialFrame(*s, now);
    }
    if (!s->doomed) UpdateInterest(*s);
  }
}

void StoreServer::Doom(ClientSession& s, const std::string& why) {
  if (s.doomed) return;
  s.doomed = true;
  doomed_.push_back(s.id());
  LOG(INFO) << "client " << s.id() << " (" << (s.name.empty() ? "?" : s.name) << ", pid " << s.pid()
            << ") disconnected: " << why;
}

void StoreServer::CloseDoomed() {
  while (!doomed_.empty()) {
    std::vector<ClientId> ids;
    ids.swap(doomed_);
    for (ClientId id : ids) {
      ClientSession* s = FindSession(id);
      if (s == nullptr) continue;
      (void)s->Flush();  // best effort: a last error reply
      CloseSession(id);
    }
  }
}

void StoreServer::CloseSession(ClientId id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, it->second->fd(), nullptr);
  std::unique_ptr<ClientSession> session = std::move(it->second);
  sessions_.erase(it);
  subscribers_.erase(id);
  dirty_.erase(id);
  waiters_.RemoveClient(id);
  partial_frames_.Remove(id);
  // May complete deferred deletes, whose events reach subscribers (and may doom a slow one).
  table_.RemoveClient(id);
  if (index_ != nullptr) {
    // Whatever its slots held is held no more: deletes that waited for them may finish.
    index_->RemoveClient(id);
    table_.RetryReclaims();
  }
  if (session->fds_discarded() > 0) {
    LOG(WARNING) << "client " << id << " sent " << session->fds_discarded() << " fds; all were closed";
  }
  if (accept_paused_) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kListenTag;
    ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_MOD, listen_fd_.get(), &ev);
    accept_paused_ = false;
  }
}

}  // namespace rplasma
