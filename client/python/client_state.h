// ClientState: the one rplasma::Client behind a Python rplasma.Client, shared (std::shared_ptr)
// by that Client and by every buffer it handed out, so the connection and the arena mapping stay
// alive while any buffer — and so any memoryview or numpy array over one — lives, even after the
// Python Client was closed or collected.
//
// Thread-safety: `client` is thread-safe (client/client.h). `open_writes` is guarded by the GIL:
// only code holding it reads or changes the map.
#ifndef RPLASMA_CLIENT_PYTHON_CLIENT_STATE_H_
#define RPLASMA_CLIENT_PYTHON_CLIENT_STATE_H_

#include <memory>

#include "absl/container/flat_hash_map.h"

#include "client/client.h"
#include "protocol/base/object_id.h"

namespace rplasma::python {

class WriteBuffer;

struct ClientState {
  std::unique_ptr<Client> client;
  // Objects created through this client and neither sealed nor aborted yet, and their writable
  // buffer (which removes itself when it is sealed, aborted or destroyed). Guarded by the GIL.
  absl::flat_hash_map<ObjectID, WriteBuffer*> open_writes;
};

using ClientHandle = std::shared_ptr<ClientState>;

// Wraps a connected client. Whoever drops the last reference destroys it with the GIL released
// (the destructor closes the connection and unmaps the arena).
ClientHandle MakeClientHandle(std::unique_ptr<Client> client);

}  // namespace rplasma::python

#endif  // RPLASMA_CLIENT_PYTHON_CLIENT_STATE_H_
