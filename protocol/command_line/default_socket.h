// Where rplasma's Unix sockets live when no flag names them, one answer for the store, the
// manager and the CLI:
//
//   euid 0                        /run/rplasma/{store,manager}.sock
//   XDG_RUNTIME_DIR set, absolute $XDG_RUNTIME_DIR/rplasma/{store,manager}.sock
//   otherwise                     /tmp/rplasma-<euid>/{store,manager}.sock
//
// The store and the manager create the directory 0700 when they bind (socket_io's listener does);
// the per-uid fallback keeps users on one host out of each other's way. The pure form takes the
// euid and the environment value so tests need not change either; the other reads the process's.
#ifndef RPLASMA_PROTOCOL_COMMAND_LINE_DEFAULT_SOCKET_H_
#define RPLASMA_PROTOCOL_COMMAND_LINE_DEFAULT_SOCKET_H_

#include <sys/types.h>

#include <string>

namespace rplasma {

// `xdg_runtime_dir` may be null (unset).
std::string DefaultSocketDir(uid_t euid, const char* xdg_runtime_dir);
std::string DefaultSocketDir();  // from geteuid() and $XDG_RUNTIME_DIR

std::string DefaultStoreSocket();    // DefaultSocketDir() + "/store.sock"
std::string DefaultManagerSocket();  // DefaultSocketDir() + "/manager.sock": the client socket

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_COMMAND_LINE_DEFAULT_SOCKET_H_
