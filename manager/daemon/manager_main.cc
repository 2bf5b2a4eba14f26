// rplasma-manager: the per-node manager (see docs/MANAGER.md). Its flags and run loop are in
// manager_command_line.cc; everything else lives in Manager.
#include "absl/flags/usage.h"

#include "manager/daemon/manager_command_line.h"
#include "protocol/base/mutex_lock.h"

int main(int argc, char** argv) {
  rplasma::UseReleaseMutexChecks();
  absl::SetProgramUsageMessage("rplasma-manager --store-socket PATH --redis HOST:PORT --secret-file PATH [...]");
  const rplasma::manager::ManagerOptions options = rplasma::manager::ParseManagerCommandLine(argc, argv);
  return rplasma::manager::RunManagerUntilSignal(options);
}
