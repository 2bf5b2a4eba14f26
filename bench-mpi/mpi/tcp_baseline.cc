#include "bench-mpi/mpi/tcp_baseline.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

#include "protocol/base/status.h"
#include "protocol/base/unique_fd.h"

namespace rplasma::bench {
namespace {

constexpr size_t kChunkBytes = 4u << 20;

absl::Status SendAll(int fd, const uint8_t* data, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, data, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return ErrnoError("send", "tcp baseline", errno);
    data += w;
    n -= static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

absl::Status RecvAll(int fd, uint8_t* data, size_t n) {
  while (n > 0) {
    ssize_t r = recv(fd, data, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return MakeError(ErrorCode::kUnavailable, "tcp baseline: peer closed");
    if (r < 0) return ErrnoError("recv", "tcp baseline", errno);
    data += r;
    n -= static_cast<size_t>(r);
  }
  return absl::OkStatus();
}

void NoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

absl::StatusOr<UniqueFd> Listen(const std::string& host, int* port) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return ErrnoError("socket", "tcp baseline", errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("tcp baseline: not an IPv4 address: ", host));
  }
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return ErrnoError("bind", host, errno);
  if (listen(fd.get(), 4) != 0) return ErrnoError("listen", host, errno);
  socklen_t len = sizeof(addr);
  getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  *port = ntohs(addr.sin_port);
  return fd;
}

absl::StatusOr<UniqueFd> Connect(const std::string& address) {
  const size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port)) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("tcp baseline: bad address ", address));
  }
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return ErrnoError("socket", "tcp baseline", errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, address.substr(0, colon).c_str(), &addr.sin_addr) != 1) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("tcp baseline: bad address ", address));
  }
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return ErrnoError("connect", address, errno);
  }
  NoDelay(fd.get());
  return fd;
}

}  // namespace

absl::Status RunTcpBaseline(const MpiWorld& world, const std::string& listen_host, const std::vector<uint64_t>& sizes,
                            int warmup, int repeat, bool per_rank_rows, std::vector<ResultRow>* rows) {
  const int rank = world.rank();
  const bool paired = rank + 1 < world.size() || rank % 2 == 1;
  const bool server = paired && rank % 2 == 0;
  const bool fetcher = paired && rank % 2 == 1;
  UniqueFd listener, conn;
  int port = 0;
  absl::Status status;
  if (server) {
    absl::StatusOr<UniqueFd> l = Listen(listen_host, &port);
    if (l.ok())
      listener = std::move(*l);
    else
      status = l.status();
  }
  status = AgreeAcrossRanks(world, status);
  if (!status.ok()) return status;
  const std::vector<std::string> addresses = world.AllGather(absl::StrCat(listen_host, ":", port));
  if (fetcher) {
    absl::StatusOr<UniqueFd> c = Connect(addresses[rank - 1]);
    if (c.ok())
      conn = std::move(*c);
    else
      status = c.status();
  }
  if (server) {
    int fd = accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0)
      status = ErrnoError("accept", "tcp baseline", errno);
    else
      conn = UniqueFd(fd);
    if (conn.valid()) NoDelay(conn.get());
  }
  RETURN_IF_ERROR(AgreeAcrossRanks(world, status));

  std::vector<uint8_t> buffer(paired ? kChunkBytes : 0, 0x5a);
  for (uint64_t size : sizes) {
    RankPhaseResult mine;
    for (int round = 0; round < warmup + repeat && status.ok(); ++round) {
      if (server) {
        uint64_t asked = 0;
        status = RecvAll(conn.get(), reinterpret_cast<uint8_t*>(&asked), sizeof(asked));
        for (uint64_t sent = 0; status.ok() && sent < asked; sent += kChunkBytes) {
          status = SendAll(conn.get(), buffer.data(), std::min<uint64_t>(kChunkBytes, asked - sent));
        }
      } else if (fetcher) {
        const absl::Time start = absl::Now();
        status = SendAll(conn.get(), reinterpret_cast<const uint8_t*>(&size), sizeof(size));
        for (uint64_t got = 0; status.ok() && got < size; got += kChunkBytes) {
          status = RecvAll(conn.get(), buffer.data(), std::min<uint64_t>(kChunkBytes, size - got));
        }
        const absl::Duration took = absl::Now() - start;
        if (round >= warmup) {
          mine.fetches += 1;
          mine.bytes += size;
          mine.wall_s += absl::ToDoubleSeconds(took);
          mine.samples_ns.push_back(absl::ToInt64Nanoseconds(took));
        }
      }
    }
    RETURN_IF_ERROR(AgreeAcrossRanks(world, status));
    const ResultRow labels{.benchmark = "fetch",
                           .system = "tcp_stream",
                           .transport = "tcp",
                           .protocol = "-",
                           .pattern = "pairs",
                           .object_size = size,
                           .ranks = world.size()};
    std::vector<ResultRow> got = SummarizeRanks(world, mine, labels, per_rank_rows);
    rows->insert(rows->end(), got.begin(), got.end());
  }
  return absl::OkStatus();
}

}  // namespace rplasma::bench
