#include "protocol/base/mutex_lock.h"
#include "manager/client_socket_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "protocol/frame.h"
#include "protocol/base/logging.h"
#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"

namespace rplasma::manager {

absl::StatusOr<std::unique_ptr<ClientSocketServer>> ClientSocketServer::Start(const std::string& path,
                                                                              fetch::FetchEngine* engine, StatsFn stats) {
  ASSIGN_OR_RETURN(UniqueFd listener, UnixListen(path));
  std::unique_ptr<ClientSocketServer> server(new ClientSocketServer(path, std::move(listener), engine, std::move(stats)));
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return ErrnoError("pipe2", "client socket wakeup", errno);
  server->wake_read_.reset(pipe_fds[0]);
  server->wake_write_.reset(pipe_fds[1]);
  server->accept_thread_ = std::thread([s = server.get()] { s->AcceptLoop(); });
  return server;
}

ClientSocketServer::ClientSocketServer(std::string path, UniqueFd listener, fetch::FetchEngine* engine, StatsFn stats)
    : path_(std::move(path)), listener_(std::move(listener)), engine_(engine), stats_(std::move(stats)) {}

ClientSocketServer::~ClientSocketServer() { Shutdown(); }

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
  ::unlink(path_.c_str());
}

void ClientSocketServer::AcceptLoop() {
  while (true) {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {wake_read_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      LOG(ERROR) << "client socket poll: " << ErrnoError("poll", path_, errno);
      return;
    }
    if (fds[1].revents != 0) return;
    const int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED) {
        LOG(WARNING) << "client socket accept: " << ErrnoError("accept", path_, errno);
        absl::SleepFor(absl::Milliseconds(10));  // e.g. EMFILE: do not spin
      }
      continue;
    }
    MutexLock lock(&mu_);
    if (shutting_down_) {
      ::close(fd);
      return;
    }
    ReapLocked();
    auto done = std::make_shared<std::atomic<bool>>(false);
    connections_.push_back(Connection{UniqueFd(fd), std::thread(), done});
    connections_.back().thread = std::thread([this, fd, done] { Serve(fd, done.get()); });
  }
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
  // The Connection entry owns `fd`; it is closed when reaped (after this returns).
  struct MarkDone {
    std::atomic<bool>* done;
    ~MarkDone() { done->store(true); }
  } mark{done};
  while (true) {
    absl::StatusOr<std::string> payload = ReadFrame(fd, kMaxManagerFrameBytes);
    if (!payload.ok()) return;  // closed, or broken framing: drop the connection
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
    std::vector<absl::Status> statuses = engine_->Fetch(fetch->ids, absl::Milliseconds(fetch->timeout_ms));
    ManagerFetchReply out;
    for (const absl::Status& s : statuses) {
      out.codes.push_back(ErrorCodeOf(s));
      out.messages.emplace_back(s.message());
    }
    reply.body = std::move(out);
  } else {
    reply.body = ManagerStatsReply{stats_()};
  }
  return reply;
}

}  // namespace rplasma::manager
