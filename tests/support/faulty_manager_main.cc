// faulty-manager: rplasma-manager with its transport wrapped in a FaultInjectingTransport, so the
// Calls and Reads it sends to peers are lost and delayed, seeded. Test-only (built into tests/bin).
// Takes every rplasma-manager flag, plus --loss, --min-delay, --max-delay and --fault-seed.
#include <cstdio>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"

#include "manager/daemon/manager_command_line.h"
#include "tests/support/fault_injecting_transport.h"

ABSL_FLAG(double, loss, 0, "probability that each request or reply message is lost, in [0, 1]");
ABSL_FLAG(absl::Duration, min_delay, absl::ZeroDuration(), "shortest delay of a delivered message");
ABSL_FLAG(absl::Duration, max_delay, absl::ZeroDuration(), "longest delay of a delivered message (uniform in between)");
ABSL_FLAG(uint64_t, fault_seed, 1, "seed of the loss and delay draws");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "faulty-manager [--loss P] [--min-delay D] [--max-delay D] [--fault-seed N] [rplasma-manager flags: "
      "--store-socket PATH --redis HOST:PORT ...]");
  const rplasma::manager::ManagerOptions options = rplasma::manager::ParseManagerCommandLine(argc, argv);
  rplasma::testing::NetworkFaults faults;
  faults.loss = absl::GetFlag(FLAGS_loss);
  faults.min_delay = absl::GetFlag(FLAGS_min_delay);
  faults.max_delay = absl::GetFlag(FLAGS_max_delay);
  faults.seed = absl::GetFlag(FLAGS_fault_seed);
  if (absl::Status valid = faults.Validate(); !valid.ok()) {
    std::fprintf(stderr, "faulty-manager: %s\n", std::string(valid.message()).c_str());
    return 1;
  }
  std::fprintf(stderr, "faulty-manager: loss %g, delay %s..%s, seed %llu\n", faults.loss,
               absl::FormatDuration(faults.min_delay).c_str(), absl::FormatDuration(faults.max_delay).c_str(),
               static_cast<unsigned long long>(faults.seed));
  return rplasma::manager::RunManagerUntilSignal(
      options, /*wrap_peer_handler=*/nullptr, [faults](std::unique_ptr<rplasma::transport::Transport> inner) {
        return std::make_unique<rplasma::testing::FaultInjectingTransport>(std::move(inner), faults);
      });
}
