#include "bench-mpi/local/peer_benchmarks.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "protocol/frame.h"
#include "protocol/object_id.h"
#include "protocol/socket_io.h"
#include "protocol/status.h"
#include "protocol/store_messages.h"
#include "protocol/unique_fd.h"

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

}  // namespace

absl::Status RunUnixPingPong(const LoopLimits& limits, ResultReporter& reporter) {
  const std::string request = GetRequestFrame();
  const std::string reply = GetReplyFrame();
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return ErrnoError("socketpair", "AF_UNIX", errno);
  }
  UniqueFd ours(fds[0]);
  UniqueFd theirs(fds[1]);
  std::thread echo(EchoLoop, theirs.get(), request.size(), reply);
  std::string in(reply.size(), '\0');
  LatencyRecorder rtt;
  absl::Status status = RunLoop(limits, [&](bool timed) -> absl::Status {
    const int64_t t0 = NowNs();
    RETURN_IF_ERROR(WriteAll(ours.get(), request.data(), request.size()));
    RETURN_IF_ERROR(ReadAll(ours.get(), in.data(), in.size()));
    if (timed) rtt.Record(NowNs() - t0);
    return absl::OkStatus();
  });
  ::shutdown(ours.get(), SHUT_RDWR);  // the echo thread sees EOF and returns
  echo.join();
  RETURN_IF_ERROR(status);
  BenchResult r = MakeResult("ping_pong", "unix_socket", "unix", "raw", request.size(), rtt.Summarize());
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

absl::Status RunRedisSetGet(const LoopLimits& limits, ResultReporter& reporter, RedisConnection& redis,
                            uint64_t size) {
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
