// transport_tcp_owner: a child process serving a TcpTransport, for tests that kill an owner for
// real. Usage: transport_tcp_owner <secret> <arena_mib>. Fills its arena with
// TestBytes(7, arena size) (TestArena::Fill), allows every read, echoes Calls, prints "OWNER_ADDRESS <address>" on
// stdout, then serves until killed.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "manager/transport/tcp/tcp_transport.h"
#include "tests/unit/transport_tcp/fake_request_handler.h"
#include "tests/unit/transport_tcp/tcp_test_util.h"

int main(int argc, char** argv) {
  namespace rt = rplasma::transport;
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <secret> <arena_mib>\n", argv[0]);
    return 2;
  }
  size_t size = std::strtoul(argv[2], nullptr, 10) << 20;
  rt::testing::TestArena arena(size);
  arena.Fill(7);
  rt::testing::FakeRequestHandler handler;
  auto owner = rt::tcp::TcpTransport::Create(rt::testing::OptionsWithSecret(argv[1]));
  if (!owner.ok() || !(*owner)->RegisterArena(arena.base(), arena.size()).ok()) return 1;
  absl::StatusOr<std::string> address = (*owner)->Listen("127.0.0.1:0", &handler);
  if (!address.ok()) return 1;
  std::printf("OWNER_ADDRESS %s\n", address->c_str());
  std::fflush(stdout);
  while (true) ::pause();
}
