// rplasma-store: the node's object store. Flags map onto StoreOptions (store/store_options.h).
//   rplasma-store --socket PATH --memory BYTES [--hugepages on|SIZE] [--name NAME]
#include <algorithm>
#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/time/time.h"
#include "protocol/base/logging.h"
#include "store/store_options.h"
#include "store/store_server.h"

ABSL_FLAG(std::string, socket, "", "Unix socket to listen on (its directory is created 0700 if missing)");
ABSL_FLAG(std::string, memory, "", "arena size in bytes; suffixes K, M, G, T (binary), e.g. 1G");
ABSL_FLAG(std::string, hugepages, "",
          "back the arena with huge pages (a sealed hugetlb memfd): 'on' for the system's default huge page size, "
          "or a page size such as 2M or 1G; a hugetlbfs mount directory is still accepted and only tells the page "
          "size (nothing is created in it). Default: off (normal pages)");
ABSL_FLAG(std::string, name, "rplasma-store", "store name reported to clients and in logs");
ABSL_FLAG(absl::Duration, partial_frame_timeout, absl::Seconds(5),
          "a client that started a request frame and has not completed it within this is disconnected");
ABSL_FLAG(std::string, max_partial_frame_bytes, "64M",
          "cap on the bytes of incomplete request frames across all clients (the client holding the most is "
          "disconnected past it)");
ABSL_FLAG(std::string, max_output_bytes, "64M",
          "a client with more replies/events queued than this (a subscriber that fell behind) is disconnected");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("rplasma-store --socket PATH --memory BYTES [--hugepages on|SIZE] [--name NAME]");
  absl::ParseCommandLine(argc, argv);

  rplasma::StoreOptions options;
  options.socket_path = absl::GetFlag(FLAGS_socket);
  absl::StatusOr<rplasma::Hugepages> hugepages = rplasma::ParseHugepages(absl::GetFlag(FLAGS_hugepages));
  if (!hugepages.ok()) {
    std::fprintf(stderr, "rplasma-store: %s\n", std::string(hugepages.status().message()).c_str());
    return 2;
  }
  options.hugepages = *hugepages;
  options.name = absl::GetFlag(FLAGS_name);
  absl::StatusOr<uint64_t> memory = rplasma::ParseByteSize(absl::GetFlag(FLAGS_memory));
  if (!memory.ok()) {
    std::fprintf(stderr, "rplasma-store: --memory: %s\n", std::string(memory.status().message()).c_str());
    return 2;
  }
  options.memory_bytes = *memory;
  absl::StatusOr<uint64_t> max_output = rplasma::ParseByteSize(absl::GetFlag(FLAGS_max_output_bytes));
  if (!max_output.ok()) {
    std::fprintf(stderr, "rplasma-store: --max_output_bytes: %s\n", std::string(max_output.status().message()).c_str());
    return 2;
  }
  options.max_output_bytes = *max_output;
  absl::StatusOr<uint64_t> max_partial = rplasma::ParseByteSize(absl::GetFlag(FLAGS_max_partial_frame_bytes));
  if (!max_partial.ok()) {
    std::fprintf(stderr, "rplasma-store: --max_partial_frame_bytes: %s\n",
                 std::string(max_partial.status().message()).c_str());
    return 2;
  }
  options.max_partial_frame_bytes = *max_partial;
  options.partial_frame_timeout = absl::GetFlag(FLAGS_partial_frame_timeout);
  options.pause_input_bytes = std::min<uint64_t>(options.pause_input_bytes, *max_output / 4);
  if (absl::Status valid = options.Validate(); !valid.ok()) {
    std::fprintf(stderr, "rplasma-store: %s\n", std::string(valid.message()).c_str());
    return 2;
  }

  absl::StatusOr<std::unique_ptr<rplasma::StoreServer>> server = rplasma::StoreServer::Create(options);
  if (!server.ok()) {
    LOG(ERROR) << "rplasma-store: " << server.status().message();
    return 1;
  }
  absl::Status run = (*server)->Run();
  server->reset();  // closes clients, unlinks the socket
  if (!run.ok()) {
    LOG(ERROR) << "rplasma-store: " << run.message();
    return 1;
  }
  return 0;
}
