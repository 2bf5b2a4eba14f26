// A program built out of tree against the installed rplasma (tests/install/install_test.sh): puts
// TEXT into the store at STORE_SOCKET, gets it back zero-copy, checks the bytes, prints the id.
#include <rplasma/client.h>

#include <cstdio>
#include <string_view>

static int Fail(const char* what, const absl::Status& status) {
  std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 3) return Fail("usage: consumer STORE_SOCKET TEXT", absl::InvalidArgumentError("arguments"));
  auto client = rplasma::Client::Connect({.store_socket = argv[1]});
  if (!client.ok()) return Fail("connect", client.status());
  const std::string_view text = argv[2];
  const absl::Span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  const rplasma::ObjectID id = rplasma::ObjectID::Random();
  if (absl::Status put = (*client)->Put(id, bytes); !put.ok()) return Fail("put", put);
  absl::StatusOr<rplasma::ObjectBuffer> got = (*client)->GetOne(id);
  if (!got.ok()) return Fail("get", got.status());
  if (got->data() != bytes) return Fail("get", absl::DataLossError("the bytes differ from the put's"));
  std::printf("%s\n", id.Hex().c_str());
  return 0;
}
