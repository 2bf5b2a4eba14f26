// client_worker: a separate process using the client library, for tests that kill a client with
// SIGKILL at a known point. It gets into the requested state, then sleeps until killed.
//
//   client_worker SOCKET hold   COUNT PREFIX        Get PREFIX-0..COUNT-1 (must exist) and hold them
//   client_worker SOCKET hold-socket COUNT PREFIX   the same, every get a store request (no slots)
//   client_worker SOCKET create COUNT PREFIX SIZE   Create PREFIX-i (SIZE bytes), write, never seal
//   client_worker SOCKET wait   1     PREFIX        block in GetOne(PREFIX-0) with no timeout
//
// Tests watch the store's Stats (refs, unsealed objects, waiting gets) to know when it is ready.
// Exit status: 0 after `wait` returns, 2 on bad usage, 1 on any error.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

#include "client/client.h"

namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "client_worker: %s\n", status.ToString().c_str());
  return 1;
}

[[noreturn]] void SleepForever() {
  for (;;) ::pause();
}

}  // namespace

int main(int argc, char** argv) {
  using rplasma::ObjectID;
  if (argc < 5) {
    std::fprintf(stderr, "usage: client_worker SOCKET hold|create|wait COUNT PREFIX [SIZE]\n");
    return 2;
  }
  const std::string mode = argv[2];
  int count = 0;
  uint64_t size = 0;
  if (!absl::SimpleAtoi(argv[3], &count) || count <= 0) return 2;
  if (mode == "create" && (argc < 6 || !absl::SimpleAtoi(argv[5], &size))) return 2;
  rplasma::ClientOptions options;
  options.store_socket = argv[1];
  options.client_name = absl::StrCat("worker-", mode);
  options.get_without_ipc = mode != "hold-socket";
  auto client = rplasma::Client::Connect(options);
  if (!client.ok()) return Fail(client.status());
  std::vector<ObjectID> ids;
  for (int i = 0; i < count; ++i) ids.push_back(ObjectID::FromLabel(absl::StrCat(argv[4], "-", i)));

  if (mode == "hold" || mode == "hold-socket") {
    auto buffers = (*client)->Get(ids);
    if (!buffers.ok()) return Fail(buffers.status());
    for (const auto& b : *buffers) {
      if (!b.valid()) return Fail(b.status());
    }
    SleepForever();
  }
  if (mode == "create") {
    for (const ObjectID& id : ids) {
      auto created = (*client)->Create(id, size);
      if (!created.ok()) return Fail(created.status());
      std::memset(created->data.data(), 0xab, created->data.size());
    }
    SleepForever();
  }
  if (mode == "wait") {
    auto buffer = (*client)->GetOne(ids[0], absl::InfiniteDuration());
    if (!buffer.ok()) return Fail(buffer.status());
    return 0;
  }
  return 2;
}
