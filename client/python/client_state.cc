#include <Python.h>
#include <pybind11/pybind11.h>

#include "client/python/client_state.h"

#include <utility>

namespace rplasma::python {

ClientHandle MakeClientHandle(std::unique_ptr<Client> client) {
  auto* state = new ClientState{std::move(client), {}};
  return ClientHandle(state, [](ClientState* dying) {
    // Closing the connection and unmapping the arena can wait on the client's threads: not with
    // the GIL held (the last owner is usually a Python object being deallocated).
    if (PyGILState_Check() != 0) {
      pybind11::gil_scoped_release nogil;
      delete dying;
    } else {
      delete dying;
    }
  });
}

}  // namespace rplasma::python
