// verbs_test_peer IP INFO_FILE SECRET ARENA_MIB: a serving process for verbs tests. Registers an
// arena filled with a known pattern, listens on IP:0, writes "ADDRESS RKEY BASE" to INFO_FILE and
// serves echo Calls until killed.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"

#include "manager/transport/verbs/verbs_transport.h"

namespace {

class Echo : public rplasma::transport::RequestHandler {
 public:
  rplasma::transport::CallReply HandleCall(uint64_t, absl::string_view request) override {
    return "re:" + std::string(request);
  }
  bool AllowRead(uint64_t, const rplasma::transport::RemoteRegion&) override { return false; }
  void OnDisconnect(uint64_t) override {}
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s IP INFO_FILE SECRET ARENA_MIB\n", argv[0]);
    return 2;
  }
  const std::string ip = argv[1], info = argv[2];
  const uint64_t bytes = std::strtoull(argv[4], nullptr, 10) << 20;
  rplasma::transport::TransportOptions options;
  options.secret = argv[3];
  auto transport = rplasma::transport::VerbsTransport::Create(options);
  if (!transport.ok()) {
    std::fprintf(stderr, "create: %s\n", transport.status().ToString().c_str());
    return 1;
  }
  std::vector<uint8_t> arena(bytes);
  for (uint64_t i = 0; i < bytes; ++i) arena[i] = static_cast<uint8_t>((i * 131) ^ (i >> 9) ^ 0x3c);
  if (auto s = (*transport)->RegisterArena(arena.data(), bytes); !s.ok()) {
    std::fprintf(stderr, "register: %s\n", s.ToString().c_str());
    return 1;
  }
  Echo echo;
  auto address = (*transport)->Listen(ip + ":0", &echo);
  if (!address.ok()) {
    std::fprintf(stderr, "listen: %s\n", address.status().ToString().c_str());
    return 1;
  }
  auto region = (*transport)->RegionFor(0, bytes);
  std::string tmp = info + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) return 1;
  std::fprintf(f, "%s %u %llu\n", address->c_str(), region.rkey, static_cast<unsigned long long>(region.addr));
  std::fclose(f);
  std::rename(tmp.c_str(), info.c_str());
  for (;;) pause();
}
