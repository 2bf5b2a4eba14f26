// Readiness and shutdown notices to systemd (Type=notify units, docs/OPERATIONS.md): one datagram
// such as "READY=1" or "STOPPING=1" to the Unix socket named by $NOTIFY_SOCKET, the protocol
// sd_notify(3) documents as stable. Without $NOTIFY_SOCKET (not started by systemd) this does
// nothing and returns OK.
//
// Written by hand rather than linking libsystemd: rplasma sends two fixed strings and passes no
// fds, and the whole protocol for that is one sendto() on a SOCK_DGRAM socket (a path, or an
// abstract name when the variable starts with '@'); the store and the manager then need no new
// library to build or install.
//
// Thread-safe (reads the environment; opens a socket per call).
#ifndef RPLASMA_PROTOCOL_COMMAND_LINE_SERVICE_NOTIFY_H_
#define RPLASMA_PROTOCOL_COMMAND_LINE_SERVICE_NOTIFY_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace rplasma {

// Sends `state` ("READY=1", "STOPPING=1", "STATUS=...") to $NOTIFY_SOCKET if it is set.
absl::Status NotifyServiceManager(absl::string_view state);

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_COMMAND_LINE_SERVICE_NOTIFY_H_
