#include "bench-mpi/local/peer_benchmarks.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include <xxhash.h>

#include "protocol/base/object_id.h"
#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"
#include "protocol/base/unique_fd.h"
#include "protocol/frame.h"
#include "protocol/store_messages.h"

namespace rplasma::bench {
namespace {

// The frames the store protocol really exchanges for a one-id Get, so the ping-pong moves the
// same bytes as the request/reply of rplasma's get.
std::string GetRequestFrame() {
  Request request;
  request.request_id = 12345;
  request.body = GetRequest{{ObjectID::Random()}, 0};
  return EncodeFrame(EncodeRequest(request));
}

std::string GetReplyFrame() {
  ObjectInfo info;
  info.id = ObjectID::Random();
  info.state = ObjectState::kSealed;
  info.offset = 1 << 20;
  info.data_size = 4096;
  info.generation = 77;
  info.checksum = 0x0123456789abcdefull;
  info.ref_count = 1;
  Reply reply;
  reply.request_id = 12345;
  reply.body = ObjectsReply{{info}, false};
  return EncodeFrame(EncodeReply(reply));
}

// Echo side: read a request, write a reply, until the other end closes.
void EchoLoop(int fd, size_t request_bytes, std::string reply) {
  std::string request(request_bytes, '\0');
  while (ReadAll(fd, request.data(), request.size()).ok()) {
    if (!WriteAll(fd, reply.data(), reply.size()).ok()) return;
  }
}

// Echo side shaped like the store's event loop: a non-blocking socket, epoll_wait, reads until
// EAGAIN, a reply per complete request. The difference to EchoLoop is the cost of that shape.
void EpollEchoLoop(int fd, size_t request_bytes, std::string reply) {
  if (!SetNonBlocking(fd).ok()) return;
  UniqueFd epoll(::epoll_create1(EPOLL_CLOEXEC));
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = fd;
  if (!epoll || ::epoll_ctl(epoll.get(), EPOLL_CTL_ADD, fd, &event) != 0) return;
  std::vector<char> buffer(64 * 1024);
  size_t buffered = 0;
  for (;;) {
    epoll_event ready;
    int n = ::epoll_wait(epoll.get(), &ready, 1, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    for (;;) {
      ssize_t got = ::recv(fd, buffer.data() + buffered, buffer.size() - buffered, 0);
      if (got == 0) return;
      if (got < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        if (errno == EINTR) continue;
        return;
      }
      buffered += static_cast<size_t>(got);
      while (buffered >= request_bytes) {
        if (::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(reply.size())) return;
        std::memmove(buffer.data(), buffer.data() + request_bytes, buffered - request_bytes);
        buffered -= request_bytes;
      }
    }
  }
}

}  // namespace

absl::Status RunUnixPingPong(const LoopLimits& limits, ResultReporter& reporter, PingPongPeer peer) {
  const std::string request = GetRequestFrame();
  const std::string reply = GetReplyFrame();
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return ErrnoError("socketpair", "AF_UNIX", errno);
  }
  UniqueFd ours(fds[0]);
  UniqueFd theirs(fds[1]);
  std::thread echo;
  pid_t child = -1;
  if (peer == PingPongPeer::kProcess) {
    // The store is another process: a switch between processes also switches address spaces,
    // which a thread echo would not pay. The child only reads and writes, then _exits.
    child = ::fork();
    if (child < 0) return ErrnoError("fork", "ping-pong echo", errno);
    if (child == 0) {
      ours.reset();
      EchoLoop(theirs.get(), request.size(), reply);
      ::_exit(0);
    }
    theirs.reset();
  } else {
    echo =
        std::thread(peer == PingPongPeer::kEpollThread ? EpollEchoLoop : EchoLoop, theirs.get(), request.size(), reply);
  }
  std::string in(reply.size(), '\0');
  LatencyRecorder rtt;
  absl::Status status = RunLoop(limits, [&](bool timed) -> absl::Status {
    const int64_t t0 = NowNs();
    RETURN_IF_ERROR(WriteAll(ours.get(), request.data(), request.size()));
    RETURN_IF_ERROR(ReadAll(ours.get(), in.data(), in.size()));
    if (timed) rtt.Record(NowNs() - t0);
    return absl::OkStatus();
  });
  ::shutdown(ours.get(), SHUT_RDWR);  // the echo sees EOF and returns
  if (echo.joinable()) echo.join();
  if (child > 0) {
    int wstatus = 0;
    while (::waitpid(child, &wstatus, 0) < 0 && errno == EINTR) {
    }
  }
  RETURN_IF_ERROR(status);
  const char* name = peer == PingPongPeer::kProcess  ? "ping_pong"
                     : peer == PingPongPeer::kThread ? "ping_pong_thread"
                                                     : "ping_pong_epoll";
  BenchResult r = MakeResult(name, "unix_socket", "unix", "raw", request.size(), rtt.Summarize());
  r.gb_per_s = 0;  // a latency probe, not a transfer
  r.metrics = {{"request_bytes", static_cast<double>(request.size())},
               {"reply_bytes", static_cast<double>(reply.size())}};
  return reporter.Add(std::move(r));
}

absl::Status RunMemcpy(const LoopLimits& limits, ResultReporter& reporter, uint64_t size) {
  std::vector<uint8_t> source(size, 0x5a);
  std::vector<uint8_t> destination(size, 0);  // touched: no page faults in the timed copies
  LatencyRecorder copy;
  RETURN_IF_ERROR(RunLoop(limits, [&](bool timed) -> absl::Status {
    const int64_t t0 = NowNs();
    std::memcpy(destination.data(), source.data(), size);
    const int64_t t1 = NowNs();
    // Keeps the copy observable so the compiler cannot drop it.
    asm volatile("" : : "r"(destination.data()) : "memory");
    if (timed) copy.Record(t1 - t0);
    return absl::OkStatus();
  }));
  return reporter.Add(MakeResult("copy", "memcpy", "memory", "-", size, copy.Summarize()));
}

absl::Status RunChecksum(const LoopLimits& limits, ResultReporter& reporter, uint64_t size) {
  std::vector<uint8_t> source(size, 0x5a);
  LatencyRecorder hash;
  uint64_t sink = 0;
  RETURN_IF_ERROR(RunLoop(limits, [&](bool timed) -> absl::Status {
    const int64_t t0 = NowNs();
    sink ^= XXH3_64bits(source.data(), size);
    const int64_t t1 = NowNs();
    if (timed) hash.Record(t1 - t0);
    return absl::OkStatus();
  }));
  asm volatile("" : : "r"(sink));
  return reporter.Add(MakeResult("checksum", "xxh3", "memory", "-", size, hash.Summarize()));
}

absl::Status RunCopyChecksum(const LoopLimits& limits, ResultReporter& reporter, uint64_t size) {
  // Chunks small enough that the copy's destination is still in L2 when the hash reads it back.
  constexpr uint64_t kChunk = 64 * 1024;
  std::vector<uint8_t> source(size, 0x5a);
  std::vector<uint8_t> destination(size, 0);
  LatencyRecorder fused;
  uint64_t sink = 0;
  RETURN_IF_ERROR(RunLoop(limits, [&](bool timed) -> absl::Status {
    const int64_t t0 = NowNs();
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    for (uint64_t off = 0; off < size; off += kChunk) {
      const uint64_t n = std::min(kChunk, size - off);
      std::memcpy(destination.data() + off, source.data() + off, n);
      XXH3_64bits_update(&state, destination.data() + off, n);
    }
    sink ^= XXH3_64bits_digest(&state);
    const int64_t t1 = NowNs();
    if (timed) fused.Record(t1 - t0);
    return absl::OkStatus();
  }));
  asm volatile("" : : "r"(sink), "r"(destination.data()) : "memory");
  return reporter.Add(MakeResult("copy_checksum", "fused", "memory", "-", size, fused.Summarize()));
}

absl::Status RunRedisSetGet(const LoopLimits& limits, ResultReporter& reporter, RedisConnection& redis, uint64_t size) {
  const std::string key = absl::StrFormat("rplasma-bench:%d", size);
  const std::string value(size, 'v');
  std::string got;
  LatencyRecorder set, get, both;
  absl::Status status = RunLoop(limits, [&](bool timed) -> absl::Status {
    const int64_t t0 = NowNs();
    RETURN_IF_ERROR(redis.Set(key, value));
    const int64_t t1 = NowNs();
    RETURN_IF_ERROR(redis.Get(key, &got));
    const int64_t t2 = NowNs();
    if (got.size() != size) {
      return MakeError(ErrorCode::kInternal, absl::StrFormat("redis GET returned %d bytes", got.size()));
    }
    if (timed) {
      set.Record(t1 - t0);
      get.Record(t2 - t1);
      both.Record(t2 - t0);
    }
    return absl::OkStatus();
  });
  absl::Status cleanup = redis.Del(key);
  RETURN_IF_ERROR(status);
  RETURN_IF_ERROR(cleanup);
  RETURN_IF_ERROR(reporter.Add(MakeResult("set", "redis", "tcp", "resp", size, set.Summarize())));
  RETURN_IF_ERROR(reporter.Add(MakeResult("get", "redis", "tcp", "resp", size, get.Summarize())));
  return reporter.Add(MakeResult("set_get", "redis", "tcp", "resp", size, both.Summarize()));
}

}  // namespace rplasma::bench
