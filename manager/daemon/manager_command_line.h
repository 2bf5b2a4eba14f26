// rplasma-manager's command line and program body, shared by manager_main.cc and the test-only
// managers (tests/support/throttled_manager_main.cc) so each flag is declared and mapped once.
//
// manager_command_line.cc defines the flags (ABSL_FLAG); it is linked only into manager binaries
// (library rplasma_manager_command_line), never into rplasma_manager itself.
#ifndef RPLASMA_MANAGER_MANAGER_COMMAND_LINE_H_
#define RPLASMA_MANAGER_MANAGER_COMMAND_LINE_H_

#include <string>

#include "absl/status/statusor.h"

#include "manager/manager.h"
#include "manager/manager_options.h"

namespace rplasma::manager {

// Parses argv — rplasma-manager's flags and any the calling binary defines — and maps the
// manager's flags onto ManagerOptions, with the conventions of protocol/command_line/command_line.h
// (--store-socket = --store_socket, --flagfile, sizes, --help, --version); --rdma-threshold is an
// alias of --pin-threshold (ResolvePinThreshold). Exits 0 after --help or --version, 2 on a bad
// flag. REQUIRES: absl::SetProgramUsageMessage was called (its text is --help's synopsis).
ManagerOptions ParseManagerCommandLine(int argc, char** argv);

// The Get/Pin switch point from --pin-threshold and its old spelling --rdma-threshold (both
// default to ""): the one that was given, ManagerOptions' default if neither was, and
// kInvalidArgument if both were given with different values.
absl::StatusOr<std::string> ResolvePinThreshold(const std::string& pin_threshold, const std::string& rdma_threshold);

// Starts a Manager (its peer service wrapped by `wrap_peer_handler`, its transport by
// `wrap_transport`, each if given), prints
// "rplasma-manager ready node=<id> transport=<name> listen=<host:port>" (and READY=1 to systemd,
// protocol/command_line/service_notify.h) and serves until SIGINT or SIGTERM (returns 0; STOPPING=1 first);
// SIGHUP is ignored. Returns 1 if it cannot start.
// REQUIRES: called from main before any thread exists (it blocks the stop signals for all threads).
int RunManagerUntilSignal(const ManagerOptions& options, Manager::PeerHandlerWrapper wrap_peer_handler = nullptr,
                          Manager::TransportWrapper wrap_transport = nullptr);

}  // namespace rplasma::manager

#endif  // RPLASMA_MANAGER_MANAGER_COMMAND_LINE_H_
