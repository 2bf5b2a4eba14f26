// throttled-manager: rplasma-manager with its peer service wrapped in a ThrottlingRequestHandler,
// for fault tests that must kill an owner part-way through a transfer. Test-only (built into
// tests/bin). Takes every rplasma-manager flag, plus --serve-bytes-per-sec (required).
#include <cstdio>
#include <memory>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"

#include "manager/daemon/manager_command_line.h"
#include "tests/support/throttling_request_handler.h"

ABSL_FLAG(uint64_t, serve_bytes_per_sec, 0, "serve Call replies and tcp Reads as if at this rate (required)");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "throttled-manager --serve-bytes-per-sec N [rplasma-manager flags: --store-socket PATH --redis HOST:PORT ...]");
  const rplasma::manager::ManagerOptions options = rplasma::manager::ParseManagerCommandLine(argc, argv);
  const uint64_t bytes_per_sec = absl::GetFlag(FLAGS_serve_bytes_per_sec);
  if (bytes_per_sec == 0) {
    std::fprintf(stderr, "throttled-manager: --serve-bytes-per-sec must be positive\n");
    return 1;
  }
  return rplasma::manager::RunManagerUntilSignal(options, [bytes_per_sec](rplasma::transport::RequestHandler* inner) {
    return std::make_unique<rplasma::testing::ThrottlingRequestHandler>(inner, bytes_per_sec);
  });
}
