#include "bench-mpi/launch/redis_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

#include "protocol/base/status.h"
#include "protocol/base/unique_fd.h"

namespace rplasma::bench {
namespace {

constexpr int kStartAttempts = 5;

// Waits until `fd` is ready for `events` or `deadline` passes.
bool PollUntil(int fd, short events, absl::Time deadline) {
  for (;;) {
    int ms = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (ms < 0) return false;
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, ms);
    if (rc > 0) return true;
    if (rc == 0) return false;
    if (errno != EINTR) return false;
  }
}

}  // namespace

// redis-server cannot be told to pick its own port, so a race with another process is possible;
// Start() retries.
absl::StatusOr<int> PickFreeLoopbackPort() {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return ErrnoError("socket", "AF_INET", errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return ErrnoError("bind", "127.0.0.1:0", errno);
  }
  socklen_t len = sizeof(addr);
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return ErrnoError("getsockname", "127.0.0.1:0", errno);
  }
  return ntohs(addr.sin_port);
}

std::string RedisServer::FindBinary() {
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
      std::string candidate = absl::StrCat(dir, "/redis-server");
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  }
  if (::access("/usr/bin/redis-server", X_OK) == 0) return "/usr/bin/redis-server";
  return "";
}

absl::Status RedisServerOptions::Validate() const {
  if (max_value_bytes < (1u << 20)) {
    return MakeError(ErrorCode::kInvalidArgument, "redis max_value_bytes must be at least 1 MiB");
  }
  if (start_timeout <= absl::ZeroDuration()) {
    return MakeError(ErrorCode::kInvalidArgument, "redis start_timeout must be positive");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<RedisServer>> RedisServer::Start(const RedisServerOptions& options) {
  RETURN_IF_ERROR(options.Validate());
  std::string binary = options.binary.empty() ? FindBinary() : options.binary;
  if (binary.empty() || ::access(binary.c_str(), X_OK) != 0) {
    return MakeError(ErrorCode::kUnavailable, "redis-server not found (looked in PATH and /usr/bin/redis-server)");
  }
  std::unique_ptr<RedisServer> server(new RedisServer(options, std::move(binary)));
  ASSIGN_OR_RETURN(server->dir_, ScratchDir::Create("rplasma-redis"));
  absl::Status last;
  for (int attempt = 0; attempt < kStartAttempts; ++attempt) {
    ASSIGN_OR_RETURN(server->port_, PickFreeLoopbackPort());
    server->address_ = absl::StrCat(server->host_, ":", server->port_);
    last = server->SpawnAndWait();
    if (last.ok()) return server;
    server->Kill();
  }
  return last;
}

absl::Status RedisServer::SpawnAndWait() {
  const std::string limit = std::to_string(options_.max_value_bytes);
  // The query buffer must hold a whole SET of the largest value plus the command around it.
  const std::string query_limit = std::to_string(options_.max_value_bytes + (1u << 20));
  std::vector<std::string> argv = {binary_,
                                   "--port",
                                   std::to_string(port_),
                                   "--bind",
                                   host_,
                                   "--save",
                                   "",
                                   "--appendonly",
                                   "no",
                                   "--dir",
                                   dir_.path(),
                                   "--daemonize",
                                   "no",
                                   "--databases",
                                   "1",
                                   "--protected-mode",
                                   "no",
                                   "--proto-max-bulk-len",
                                   limit,
                                   "--client-query-buffer-limit",
                                   query_limit};
  argv.insert(argv.end(), options_.extra_args.begin(), options_.extra_args.end());
  ASSIGN_OR_RETURN(process_, ChildProcess::Start(argv, log_path()));

  absl::Time deadline = absl::Now() + options_.start_timeout;
  while (absl::Now() < deadline) {
    if (!process_.running()) {
      return MakeError(ErrorCode::kUnavailable, absl::StrFormat("redis-server on %s exited during start-up; log:\n%s",
                                                                address_, FileTail(log_path())));
    }
    // The PING must reach our child, not a stranger that took the port: check it still runs.
    if (Ping() && process_.running()) return absl::OkStatus();
    absl::SleepFor(absl::Milliseconds(10));
  }
  return MakeError(ErrorCode::kUnavailable,
                   absl::StrFormat("redis-server on %s did not answer PING within %s; log:\n%s", address_,
                                   absl::FormatDuration(options_.start_timeout), FileTail(log_path())));
}

absl::Status RedisServer::Restart() {
  Kill();
  absl::Status last;
  // The old server's connections may linger in TIME_WAIT; redis binds with SO_REUSEADDR, but
  // retry a few times in case a client races us for the port.
  for (int attempt = 0; attempt < kStartAttempts; ++attempt) {
    last = SpawnAndWait();
    if (last.ok()) return last;
    Kill();
    absl::SleepFor(absl::Milliseconds(100));
  }
  return last;
}

bool RedisServer::Ping(absl::Duration timeout) const {
  absl::StatusOr<std::string> pong = Command({"PING"}, timeout);
  return pong.ok() && *pong == "PONG";
}

absl::StatusOr<std::string> RedisServer::Command(const std::vector<std::string>& args, absl::Duration timeout) const {
  constexpr size_t kMaxReply = 1u << 20;
  const absl::Time deadline = absl::Now() + timeout;
  const std::string what = absl::StrFormat("redis %s: %s", address_, args.empty() ? "" : args[0]);
  auto unavailable = [&](absl::string_view why) {
    return MakeError(ErrorCode::kUnavailable, absl::StrCat(what, ": ", why));
  };
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return ErrnoError("socket", address_, errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port_));
  if (::inet_pton(AF_INET, host_.c_str(), &addr.sin_addr) != 1) return unavailable("bad host");
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (errno != EINPROGRESS) return ErrnoError("connect", address_, errno);
    if (!PollUntil(fd.get(), POLLOUT, deadline)) return unavailable("connect timed out");
    int err = 0;
    socklen_t len = sizeof(err);
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      return ErrnoError("connect", address_, err);
    }
  }
  std::string request = absl::StrCat("*", args.size(), "\r\n");
  for (const std::string& arg : args) absl::StrAppend(&request, "$", arg.size(), "\r\n", arg, "\r\n");
  for (size_t sent = 0; sent < request.size();) {
    if (!PollUntil(fd.get(), POLLOUT, deadline)) return unavailable("send timed out");
    ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) return ErrnoError("send", address_, errno);
    if (n > 0) sent += static_cast<size_t>(n);
  }
  // Reads until the reply is whole: a line, or for a bulk string "$<n>" a line and n + 2 bytes.
  std::string reply;
  for (;;) {
    const size_t eol = reply.find("\r\n");
    if (eol != std::string::npos) {
      const char type = reply[0];
      const std::string line = reply.substr(1, eol - 1);
      if (type == '+' || type == ':') return line;
      if (type == '-') return ProtocolError(absl::StrCat(what, ": ", line));
      if (type != '$') return unavailable(absl::StrCat("unexpected reply type ", std::string(1, type)));
      int64_t length = 0;
      if (!absl::SimpleAtoi(line, &length) || length > static_cast<int64_t>(kMaxReply)) {
        return unavailable("bad bulk length");
      }
      if (length < 0) return std::string();
      if (reply.size() >= eol + 2 + static_cast<size_t>(length) + 2) {
        return reply.substr(eol + 2, static_cast<size_t>(length));
      }
    }
    if (reply.size() > kMaxReply + 64) return unavailable("reply too long");
    if (!PollUntil(fd.get(), POLLIN, deadline)) return unavailable("no reply in time");
    char buf[4096];
    ssize_t n = ::recv(fd.get(), buf, sizeof(buf), 0);
    if (n == 0) return unavailable("connection closed");
    if (n < 0 && errno != EAGAIN && errno != EINTR) return ErrnoError("recv", address_, errno);
    if (n > 0) reply.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace rplasma::bench
