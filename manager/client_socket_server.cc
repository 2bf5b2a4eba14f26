#include "manager/client_socket_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"

#include "protocol/base/logging.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"
#include "protocol/frame.h"

namespace rplasma::manager {
namespace {

// How long Start waits for an existing socket at `path` to answer before calling it stale.
constexpr absl::Duration kLiveProbeTimeout = absl::Seconds(1);
// How long a finished connection may keep its thread and fd before the accept loop reaps it.
constexpr absl::Duration kReapInterval = absl::Milliseconds(500);

// Refuses a path that is not a socket, or a socket someone answers on; a stale socket is left for
// UnixListen to replace.
absl::Status CheckNotServed(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return ErrnoError("lstat", path, errno);
  }
  if (!S_ISSOCK(st.st_mode)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat("--client-socket ", path, " exists and is not a socket; refusing to replace it"));
  }
  absl::StatusOr<UniqueFd> probe = UnixConnect(path, absl::Now() + kLiveProbeTimeout);
  // A connect that times out found a full backlog: someone is serving it too.
  if (probe.ok() || ErrorCodeOf(probe.status()) == ErrorCode::kDeadlineExceeded) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat("another manager is serving ", path, "; refusing to take its socket over"));
  }
  LOG(INFO) << "replacing stale client socket " << path << " (" << probe.status().message() << ")";
  return absl::OkStatus();
}

}  // namespace

absl::Status ClientSocketServerOptions::Validate() const {
  if (max_connections == 0) return MakeError(ErrorCode::kInvalidArgument, "--max-client-connections must be positive");
  if (request_deadline < absl::Milliseconds(10)) {
    return MakeError(ErrorCode::kInvalidArgument, "--client-request-deadline must be at least 10ms");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ClientSocketServer>> ClientSocketServer::Start(const std::string& path,
                                                                              const ClientSocketServerOptions& options,
                                                                              FetchFn fetch, StatsFn stats) {
  RETURN_IF_ERROR(options.Validate());
  RETURN_IF_ERROR(PrepareSocketDirectory(path, "client socket"));
  RETURN_IF_ERROR(CheckNotServed(path));
  ASSIGN_OR_RETURN(UniqueFd listener, UnixListen(path));
  if (::chmod(path.c_str(), 0600) != 0) return ErrnoError("chmod", path, errno);
  std::unique_ptr<ClientSocketServer> server(
      new ClientSocketServer(path, options, std::move(listener), std::move(fetch), std::move(stats)));
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return ErrnoError("pipe2", "client socket wakeup", errno);
  server->wake_read_.reset(pipe_fds[0]);
  server->wake_write_.reset(pipe_fds[1]);
  server->accept_thread_ = std::thread([s = server.get()] { s->AcceptLoop(); });
  return server;
}

ClientSocketServer::ClientSocketServer(std::string path, const ClientSocketServerOptions& options, UniqueFd listener,
                                       FetchFn fetch, StatsFn stats)
    : path_(std::move(path)),
      options_(options),
      uid_(::geteuid()),
      listener_(std::move(listener)),
      fetch_(std::move(fetch)),
      stats_(std::move(stats)) {}

ClientSocketServer::~ClientSocketServer() { Shutdown(); }

ClientSocketStats ClientSocketServer::stats() const { return counters_.Snapshot(); }

void ClientSocketServer::Shutdown() {
  std::list<Connection> connections;
  {
    MutexLock lock(&mu_);
    if (shutting_down_) return;
    shutting_down_ = true;
    for (Connection& c : connections_) ::shutdown(c.fd.get(), SHUT_RDWR);  // unblocks their reads
    connections.swap(connections_);
  }
  if (wake_write_.valid()) {
    const char byte = 1;
    (void)!::write(wake_write_.get(), &byte, 1);
  }
  if (accept_thread_.joinable()) accept_thread_.join();
  for (Connection& c : connections) {
    if (c.thread.joinable()) c.thread.join();
  }
  ::unlink(path_.c_str());  // ours: Start never takes over a socket someone serves
}

void ClientSocketServer::AcceptLoop() {
  while (true) {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {wake_read_.get(), POLLIN, 0}};
    // Woken at least every kReapInterval, so a finished connection's thread and fd are gone within
    // it even when nobody connects again.
    const int ready = ::poll(fds, 2, static_cast<int>(absl::ToInt64Milliseconds(kReapInterval)));
    if (ready < 0) {
      if (errno == EINTR) continue;
      LOG(ERROR) << "client socket poll: " << ErrnoError("poll", path_, errno);
      return;
    }
    if (fds[1].revents != 0) return;
    if (ready == 0) {
      MutexLock lock(&mu_);
      if (shutting_down_) return;
      ReapLocked();
      continue;
    }
    const int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED) {
        LOG(WARNING) << "client socket accept: " << ErrnoError("accept", path_, errno);
        absl::SleepFor(absl::Milliseconds(10));  // e.g. EMFILE: do not spin
      }
      continue;
    }
    UniqueFd owned(fd);
    MutexLock lock(&mu_);
    if (shutting_down_) return;
    ReapLocked();
    if (!Admit(fd)) continue;  // `owned` closes it
    auto done = std::make_shared<std::atomic<bool>>(false);
    connections_.push_back(Connection{std::move(owned), std::thread(), done});
    connections_.back().thread = std::thread([this, fd, done] { Serve(fd, done.get()); });
  }
}

bool ClientSocketServer::Admit(int fd) {
  const absl::Time now = absl::Now();
  // Refusals come in floods (a misbehaving client in a loop): one line a second says enough.
  const bool log = now - last_refusal_log_ >= absl::Seconds(1);
  absl::StatusOr<PeerCredentials> cred = GetPeerCredentials(fd);
  if (!cred.ok() || (cred->uid != uid_ && cred->uid != 0)) {
    counters_.refused_credentials.fetch_add(1);
    if (log) {
      last_refusal_log_ = now;
      LOG(WARNING) << "client socket " << path_ << ": refusing a connection "
                   << (cred.ok() ? absl::StrCat("from pid ", cred->pid, " uid ", cred->uid) : cred.status().ToString())
                   << ": the manager runs as uid " << uid_;
    }
    return false;
  }
  if (connections_.size() >= options_.max_connections) {
    counters_.refused_over_cap.fetch_add(1);
    if (log) {
      last_refusal_log_ = now;
      LOG(WARNING) << "client socket " << path_ << ": " << connections_.size()
                   << " connections open (the cap); closing a new one from pid " << cred->pid;
    }
    return false;
  }
  // A client that does not read its replies must not hold the thread forever.
  const timeval send_timeout = absl::ToTimeval(options_.request_deadline);
  if (::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof(send_timeout)) != 0) {
    LOG(WARNING) << "client socket: " << ErrnoError("setsockopt", "SO_SNDTIMEO", errno);
    return false;
  }
  return true;
}

void ClientSocketServer::ReapLocked() {
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (it->done->load()) {
      it->thread.join();
      it = connections_.erase(it);  // closes the fd
    } else {
      ++it;
    }
  }
}

void ClientSocketServer::Serve(int fd, std::atomic<bool>* done) {
  // The Connection entry owns `fd`; it is closed when reaped (at the next accept, or within
  // kReapInterval). The client sees the end at once: shutdown() here.
  struct MarkDone {
    int fd;
    std::atomic<bool>* done;
    ~MarkDone() {
      ::shutdown(fd, SHUT_RDWR);
      done->store(true);
    }
  } mark{fd, done};
  while (true) {
    // Idle between requests for as long as the client likes; Shutdown's shutdown() wakes this.
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    absl::StatusOr<std::string> payload = ReadFrame(fd, kMaxManagerFrameBytes, absl::Now() + options_.request_deadline);
    if (!payload.ok()) {
      if (ErrorCodeOf(payload.status()) == ErrorCode::kDeadlineExceeded) {
        counters_.dropped_stalled.fetch_add(1);
        LOG(WARNING) << "client socket " << path_ << ": dropping a client whose request did not arrive within "
                     << absl::FormatDuration(options_.request_deadline);
      }
      return;  // closed, stalled, or broken framing: drop the connection
    }
    absl::StatusOr<ManagerRequest> request = DecodeManagerRequest(*payload);
    ManagerReply reply;
    if (!request.ok()) {
      reply.error = ErrorCodeOf(request.status());
      reply.error_message = std::string(request.status().message());
    } else {
      reply = Handle(*request);
    }
    if (!WriteFrame(fd, EncodeManagerReply(reply)).ok()) return;
  }
}

ManagerReply ClientSocketServer::Handle(const ManagerRequest& request) {
  ManagerReply reply;
  reply.request_id = request.request_id;
  if (const auto* fetch = std::get_if<ManagerFetchRequest>(&request.body)) {
    std::vector<absl::Status> statuses = fetch_(*fetch);
    ManagerFetchReply out;
    for (const absl::Status& s : statuses) {
      out.codes.push_back(ErrorCodeOf(s));
      out.messages.emplace_back(s.message());
    }
    reply.body = std::move(out);
  } else {
    reply.body = stats_();
  }
  return reply;
}

}  // namespace rplasma::manager
