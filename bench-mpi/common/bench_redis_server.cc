#include "bench-mpi/common/bench_redis_server.h"

#include <arpa/inet.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "protocol/base/status.h"
#include "protocol/base/unique_fd.h"

namespace rplasma::bench {
namespace {

constexpr int kStartAttempts = 5;

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

absl::Status ContextError(redisContext* c, absl::string_view op) {
  return MakeError(ErrorCode::kUnavailable,
                   absl::StrFormat("redis %s: %s", op, c->errstr[0] != '\0' ? c->errstr : "no reply"));
}

}  // namespace

absl::StatusOr<int> PickFreeLoopbackPort() {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return ErrnoError("socket", "AF_INET", errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return ErrnoError("bind", "127.0.0.1:0", errno);
  }
  socklen_t len = sizeof(addr);
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return ErrnoError("getsockname", "127.0.0.1:0", errno);
  }
  return ntohs(addr.sin_port);
}

absl::StatusOr<RedisConnection> RedisConnection::Connect(const std::string& host, int port,
                                                         absl::Duration timeout) {
  timeval tv = absl::ToTimeval(timeout);
  redisContext* c = redisConnectWithTimeout(host.c_str(), port, tv);
  if (c == nullptr) return MakeError(ErrorCode::kUnavailable, "redisConnect: out of memory");
  RedisConnection connection(c);
  if (c->err != 0) return ContextError(c, absl::StrFormat("connect(%s:%d)", host, port));
  return connection;
}

RedisConnection::RedisConnection(RedisConnection&& other) noexcept
    : context_(std::exchange(other.context_, nullptr)) {}

RedisConnection& RedisConnection::operator=(RedisConnection&& other) noexcept {
  if (this != &other) {
    if (context_ != nullptr) redisFree(context_);
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

RedisConnection::~RedisConnection() {
  if (context_ != nullptr) redisFree(context_);
}

absl::Status RedisConnection::Ping() {
  ReplyPtr r(static_cast<redisReply*>(redisCommand(context_, "PING")));
  if (!r) return ContextError(context_, "PING");
  if (r->type != REDIS_REPLY_STATUS || absl::string_view(r->str, r->len) != "PONG") {
    return MakeError(ErrorCode::kUnavailable, "redis PING: unexpected reply");
  }
  return absl::OkStatus();
}

absl::Status RedisConnection::Set(absl::string_view key, absl::string_view value) {
  ReplyPtr r(static_cast<redisReply*>(
      redisCommand(context_, "SET %b %b", key.data(), key.size(), value.data(), value.size())));
  if (!r) return ContextError(context_, "SET");
  if (r->type == REDIS_REPLY_ERROR) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("redis SET: ", absl::string_view(r->str, r->len)));
  }
  return absl::OkStatus();
}

absl::Status RedisConnection::Get(absl::string_view key, std::string* value) {
  ReplyPtr r(static_cast<redisReply*>(redisCommand(context_, "GET %b", key.data(), key.size())));
  if (!r) return ContextError(context_, "GET");
  if (r->type == REDIS_REPLY_NIL) return ObjectNotFoundError(absl::StrCat("redis GET ", key, ": nil"));
  if (r->type != REDIS_REPLY_STRING) {
    return MakeError(ErrorCode::kProtocolError, "redis GET: reply is not a string");
  }
  value->assign(r->str, r->len);
  return absl::OkStatus();
}

absl::Status RedisConnection::Del(absl::string_view key) {
  ReplyPtr r(static_cast<redisReply*>(redisCommand(context_, "DEL %b", key.data(), key.size())));
  if (!r) return ContextError(context_, "DEL");
  return absl::OkStatus();
}

absl::Status BenchRedisServerOptions::Validate() const {
  if (max_value_bytes < (1u << 20)) {
    return MakeError(ErrorCode::kInvalidArgument, "redis max_value_bytes must be at least 1 MiB");
  }
  if (start_timeout <= absl::ZeroDuration()) {
    return MakeError(ErrorCode::kInvalidArgument, "redis start_timeout must be positive");
  }
  return absl::OkStatus();
}

std::string BenchRedisServer::FindBinary() {
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
      std::string candidate = absl::StrCat(dir, "/redis-server");
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  }
  if (::access("/usr/bin/redis-server", X_OK) == 0) return "/usr/bin/redis-server";
  return "";
}

std::string BenchRedisServer::address() const { return absl::StrCat(host_, ":", port_); }

absl::StatusOr<std::unique_ptr<BenchRedisServer>> BenchRedisServer::Start(
    const BenchRedisServerOptions& options) {
  RETURN_IF_ERROR(options.Validate());
  std::string binary = options.binary.empty() ? FindBinary() : options.binary;
  if (binary.empty() || ::access(binary.c_str(), X_OK) != 0) {
    return MakeError(ErrorCode::kUnavailable, "redis-server not found (PATH, /usr/bin/redis-server)");
  }
  std::unique_ptr<BenchRedisServer> server(new BenchRedisServer());
  ASSIGN_OR_RETURN(server->dir_, ScratchDir::Create("rplasma-bench-redis"));
  server->max_value_bytes_ = options.max_value_bytes;
  absl::Status last;
  for (int attempt = 0; attempt < kStartAttempts; ++attempt) {
    ASSIGN_OR_RETURN(server->port_, PickFreeLoopbackPort());
    last = server->SpawnAndWait(options, binary);
    if (last.ok()) return server;
    server->process_.Stop();
  }
  return last;
}

absl::Status BenchRedisServer::SpawnAndWait(const BenchRedisServerOptions& options,
                                            const std::string& binary) {
  const std::string limit = std::to_string(options.max_value_bytes);
  // The query buffer must hold a whole SET of the largest value plus the command around it.
  const std::string query_limit = std::to_string(options.max_value_bytes + (1u << 20));
  std::vector<std::string> argv = {binary, "--port", std::to_string(port_), "--bind", host_,
                                   "--save", "", "--appendonly", "no", "--dir", dir_.path(),
                                   "--daemonize", "no", "--databases", "1", "--protected-mode", "no",
                                   "--proto-max-bulk-len", limit,
                                   "--client-query-buffer-limit", query_limit};
  const std::string log = dir_.Join("redis.log");
  ASSIGN_OR_RETURN(process_, ChildProcess::Spawn(argv, log));
  absl::Time deadline = absl::Now() + options.start_timeout;
  while (absl::Now() < deadline) {
    if (!process_.Running()) {
      return MakeError(ErrorCode::kUnavailable,
                       absl::StrFormat("redis-server on port %d exited at start; log:\n%s", port_, FileTail(log)));
    }
    auto connection = RedisConnection::Connect(host_, port_, absl::Milliseconds(200));
    // The PING must reach our child, not a stranger that took the port: check it still runs.
    if (connection.ok() && connection->Ping().ok() && process_.Running()) return absl::OkStatus();
    absl::SleepFor(absl::Milliseconds(10));
  }
  return MakeError(ErrorCode::kUnavailable,
                   absl::StrFormat("redis-server on port %d did not answer PING; log:\n%s", port_, FileTail(log)));
}

}  // namespace rplasma::bench
