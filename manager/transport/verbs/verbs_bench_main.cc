// rplasma-verbs-bench: Call latency and Read bandwidth of the verbs transport by size, on a real
// device, server and client in this process (like a perftest pair on one host). CSV on stdout,
// header row first, columns as every rplasma benchmark (docs/VERBS.md has numbers and ratios).
//
//   rplasma-verbs-bench --address=10.77.0.1 [--call_sizes=64,4096,65536] [--read_sizes=...]
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

#include "manager/transport/verbs/verbs_transport.h"

ABSL_FLAG(std::string, address, "", "IP of the RDMA netdev to listen on (required)");
ABSL_FLAG(std::string, call_sizes, "64,4096,65536", "Call request (= reply) sizes in bytes");
ABSL_FLAG(std::string, read_sizes, "4096,65536,1048576,4194304", "Read sizes in bytes");
ABSL_FLAG(int, call_iters, 1000, "Calls per size");
ABSL_FLAG(uint64_t, read_bytes_per_size, 64u << 20, "bytes read per size (at least 20 Reads)");
ABSL_FLAG(uint32_t, message_bytes, 64 * 1024, "TransportOptions.message_bytes");
ABSL_FLAG(uint64_t, read_chunk_bytes, 1 << 20, "TransportOptions.read_chunk_bytes");
ABSL_FLAG(uint32_t, max_reads_in_flight, 16, "TransportOptions.max_reads_in_flight");
ABSL_FLAG(int64_t, cq_spin_us, -1, "TransportOptions.cq_spin in microseconds (-1: the default)");

namespace {

using rplasma::transport::RemoteRegion;

class Echo : public rplasma::transport::RequestHandler {
 public:
  rplasma::transport::CallReply HandleCall(uint64_t, absl::string_view request) override {
    return std::string(request);
  }
  bool AllowRead(uint64_t, const RemoteRegion&) override { return false; }
  void OnDisconnect(uint64_t) override {}
};

std::vector<uint64_t> Sizes(const std::string& list) {
  std::vector<uint64_t> out;
  for (absl::string_view part : absl::StrSplit(list, ',', absl::SkipEmpty())) {
    uint64_t v = 0;
    if (absl::SimpleAtoi(part, &v) && v > 0) out.push_back(v);
  }
  return out;
}

double Percentile(std::vector<double>& v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

void Row(const char* bench, const char* protocol, uint64_t size, size_t ops, double seconds,
         std::vector<double>& lat_us) {
  double ops_s = ops / seconds;
  std::printf("%s,rplasma,verbs,%s,%llu,%.1f,%.4f,%.1f,%.1f\n", bench, protocol, static_cast<unsigned long long>(size),
              ops_s, ops_s * size / 1e9, Percentile(lat_us, 0.5), Percentile(lat_us, 0.99));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string ip = absl::GetFlag(FLAGS_address);
  if (ip.empty()) {
    std::fprintf(stderr, "--address is required (e.g. $RDMA_VM_IP)\n");
    return 2;
  }
  rplasma::transport::TransportOptions o;
  o.secret = "rplasma-verbs-bench";
  o.message_bytes = absl::GetFlag(FLAGS_message_bytes);
  o.read_chunk_bytes = absl::GetFlag(FLAGS_read_chunk_bytes);
  o.max_reads_in_flight = absl::GetFlag(FLAGS_max_reads_in_flight);
  if (absl::GetFlag(FLAGS_cq_spin_us) >= 0) o.cq_spin = absl::Microseconds(absl::GetFlag(FLAGS_cq_spin_us));
  std::vector<uint64_t> read_sizes = Sizes(absl::GetFlag(FLAGS_read_sizes));
  uint64_t arena_bytes = 1 << 20;
  for (uint64_t s : read_sizes) arena_bytes = std::max(arena_bytes, s);
  std::vector<uint8_t> server_arena(arena_bytes, 0x5a), client_arena(arena_bytes);

  auto server = rplasma::transport::VerbsTransport::Create(o);
  auto client = rplasma::transport::VerbsTransport::Create(o);
  if (!server.ok() || !client.ok()) {
    std::fprintf(stderr, "no verbs transport: %s\n",
                 (server.ok() ? client.status() : server.status()).ToString().c_str());
    return 1;
  }
  Echo echo;
  if (auto s = (*server)->RegisterArena(server_arena.data(), arena_bytes); !s.ok()) return 1;
  if (auto s = (*client)->RegisterArena(client_arena.data(), arena_bytes); !s.ok()) return 1;
  auto address = (*server)->Listen(ip + ":0", &echo);
  if (!address.ok()) {
    std::fprintf(stderr, "listen: %s\n", address.status().ToString().c_str());
    return 1;
  }
  auto channel = (*client)->Connect(*address, absl::Now() + absl::Seconds(30));
  if (!channel.ok()) {
    std::fprintf(stderr, "connect: %s\n", channel.status().ToString().c_str());
    return 1;
  }
  std::printf("benchmark,system,transport,protocol,object_size,ops_per_s,gb_per_s,p50_us,p99_us\n");

  for (uint64_t size : Sizes(absl::GetFlag(FLAGS_call_sizes))) {
    std::string request(size, 'r');
    int iters = absl::GetFlag(FLAGS_call_iters);
    std::vector<double> lat;
    for (int i = 0; i < 10; ++i) (void)(*channel)->Call(request, absl::Now() + absl::Seconds(30));  // warm-up
    const uint64_t events0 = (*client)->cq_events() + (*server)->cq_events();
    const uint64_t polled0 = (*client)->waiter_completions() + (*server)->waiter_completions();
    absl::Time start = absl::Now();
    for (int i = 0; i < iters; ++i) {
      absl::Time t0 = absl::Now();
      auto r = (*channel)->Call(request, t0 + absl::Seconds(30));
      if (!r.ok() || r->size() != size) {
        std::fprintf(stderr, "call failed: %s\n", r.status().ToString().c_str());
        return 1;
      }
      lat.push_back(absl::ToDoubleMicroseconds(absl::Now() - t0));
    }
    Row("call_rtt", "send", size, iters, absl::ToDoubleSeconds(absl::Now() - start), lat);
    // Which completion path ran (both sides): wake-ups of completion threads vs own polling.
    std::fprintf(
        stderr, "call %llu B: per call %.2f completion-thread wake-ups, %.2f completions polled by waiters\n",
        static_cast<unsigned long long>(size),
        static_cast<double>((*client)->cq_events() + (*server)->cq_events() - events0) / iters,
        static_cast<double>((*client)->waiter_completions() + (*server)->waiter_completions() - polled0) / iters);
  }

  for (uint64_t size : read_sizes) {
    RemoteRegion region = (*server)->RegionFor(0, size);
    uint64_t iters = std::max<uint64_t>(20, absl::GetFlag(FLAGS_read_bytes_per_size) / size);
    std::vector<double> lat;
    absl::Time start = absl::Now();
    for (uint64_t i = 0; i < iters; ++i) {
      absl::Time t0 = absl::Now();
      if (auto s = (*channel)->Read(region, client_arena.data(), t0 + absl::Seconds(60)); !s.ok()) {
        std::fprintf(stderr, "read failed: %s\n", s.ToString().c_str());
        return 1;
      }
      lat.push_back(absl::ToDoubleMicroseconds(absl::Now() - t0));
    }
    Row("read", "read", size, iters, absl::ToDoubleSeconds(absl::Now() - start), lat);
  }
  (*client)->Shutdown();
  (*server)->Shutdown();
  return 0;
}
