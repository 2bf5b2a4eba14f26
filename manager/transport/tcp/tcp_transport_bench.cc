// rplasma-tcp-transport-bench: how close a TcpTransport Read gets to a raw TCP stream on loopback,
// plus small-Call latency. Both sides run in this process over 127.0.0.1.
//
//   rplasma-tcp-transport-bench [size_mib=64] [rounds=10]
//
// Prints one line per measurement and the Read/raw throughput ratio. Not a test: no assertions.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "manager/transport/tcp/tcp_socket.h"
#include "manager/transport/tcp/tcp_transport.h"
#include "protocol/logging.h"

namespace rplasma::transport::tcp {
namespace {

uint8_t* MapArena(size_t size) {
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  CHECK(p != MAP_FAILED) << "mmap";
  std::memset(p, 0x5a, size);
  return static_cast<uint8_t*>(p);
}

// One connected loopback pair of plain blocking sockets with TCP_NODELAY (as the transport uses).
void RawPair(UniqueFd* a, UniqueFd* b) {
  UniqueFd listener = *TcpListen("127.0.0.1:0");
  std::string address = *LocalAddress(listener.get());
  *a = *TcpConnect(address, absl::Now() + absl::Seconds(5));
  *b = *TcpAccept(listener.get(), absl::Now() + absl::Seconds(5));
  for (int fd : {a->get(), b->get()}) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    int flags = 0;  // back to blocking: the simplest possible stream
    ::ioctl(fd, FIONBIO, &flags);
  }
}

// Raw stream: the sender sends `size` bytes from a buffer, the receiver recv()s them into another.
double RawStreamGbps(uint8_t* src, uint8_t* dst, size_t size, int rounds) {
  UniqueFd tx, rx;
  RawPair(&tx, &rx);
  std::thread sender([&] {
    for (int r = 0; r < rounds + 1; ++r) {
      size_t off = 0;
      while (off < size) {
        ssize_t n = ::send(tx.get(), src + off, size - off, MSG_NOSIGNAL);
        CHECK(n > 0) << "send";
        off += static_cast<size_t>(n);
      }
    }
  });
  absl::Time start;
  for (int r = 0; r < rounds + 1; ++r) {
    if (r == 1) start = absl::Now();  // round 0 warms up
    size_t off = 0;
    while (off < size) {
      ssize_t n = ::recv(rx.get(), dst + off, size - off, 0);
      CHECK(n > 0) << "recv";
      off += static_cast<size_t>(n);
    }
  }
  double secs = absl::ToDoubleSeconds(absl::Now() - start);
  sender.join();
  return static_cast<double>(size) * rounds / secs / 1e9;
}

class BenchHandler : public RequestHandler {
 public:
  std::string HandleCall(uint64_t, absl::string_view request) override { return std::string(request); }
  bool AllowRead(uint64_t, const RemoteRegion&) override { return true; }
  void OnDisconnect(uint64_t) override {}
};

int Main(int argc, char** argv) {
  size_t size_mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 10;
  if (size_mib == 0 || rounds <= 0) {
    std::fprintf(stderr, "usage: %s [size_mib>0] [rounds>0]\n", argv[0]);
    return 2;
  }
  size_t size = size_mib << 20;
  uint8_t* owner_arena = MapArena(size);
  uint8_t* reader_arena = MapArena(size);

  TransportOptions options;
  options.secret = "bench";
  BenchHandler handler;
  auto owner = *TcpTransport::Create(options);
  CHECK(owner->RegisterArena(owner_arena, size).ok());
  std::string address = *owner->Listen("127.0.0.1:0", &handler);
  auto reader = *TcpTransport::Create(options);
  CHECK(reader->RegisterArena(reader_arena, size).ok());
  auto channel = *reader->Connect(address, absl::Now() + absl::Seconds(5));

  // Interleave raw and transport measurements so machine noise hits both alike; keep the best.
  double raw_best = 0, read_best = 0;
  for (int trial = 0; trial < 3; ++trial) {
    raw_best = std::max(raw_best, RawStreamGbps(owner_arena, reader_arena, size, rounds));
    CHECK(channel->Read(owner->RegionFor(0, size), reader_arena, absl::Now() + absl::Seconds(60)).ok());
    absl::Time start = absl::Now();
    for (int r = 0; r < rounds; ++r) {
      absl::Status s = channel->Read(owner->RegionFor(0, size), reader_arena, absl::Now() + absl::Seconds(60));
      CHECK(s.ok()) << s.ToString();
    }
    double secs = absl::ToDoubleSeconds(absl::Now() - start);
    read_best = std::max(read_best, static_cast<double>(size) * rounds / secs / 1e9);
  }
  std::printf("raw_tcp_stream  size=%zuMiB rounds=%d  %.2f GB/s\n", size_mib, rounds, raw_best);
  std::printf("tcp_transport_read  size=%zuMiB rounds=%d  %.2f GB/s\n", size_mib, rounds, read_best);
  std::printf("ratio read/raw = %.2f\n", read_best / raw_best);

  // Small Call round-trip latency.
  std::vector<double> us;
  for (int i = 0; i < 2000; ++i) {
    absl::Time t0 = absl::Now();
    CHECK(channel->Call("ping-64-bytes-ping-64-bytes-ping-64-bytes-ping-64-bytes-ping-64-by",
                        absl::Now() + absl::Seconds(5)).ok());
    us.push_back(absl::ToDoubleMicroseconds(absl::Now() - t0));
  }
  std::sort(us.begin(), us.end());
  std::printf("call_64B  p50=%.1f us  p99=%.1f us\n", us[us.size() / 2], us[us.size() * 99 / 100]);

  reader->Shutdown();
  owner->Shutdown();
  ::munmap(owner_arena, size);
  ::munmap(reader_arena, size);
  return 0;
}

}  // namespace
}  // namespace rplasma::transport::tcp

int main(int argc, char** argv) { return rplasma::transport::tcp::Main(argc, argv); }
