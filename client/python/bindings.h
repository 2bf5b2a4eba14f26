// The pieces of the rplasma._rplasma extension module, one Register function per concept; module.cc
// calls them in dependency order (a type is registered before a signature that names it).
#ifndef RPLASMA_CLIENT_PYTHON_BINDINGS_H_
#define RPLASMA_CLIENT_PYTHON_BINDINGS_H_

#include <pybind11/pybind11.h>

namespace rplasma::python {

void RegisterErrors(pybind11::module_& module);        // python_errors.cc: Error and one subclass per ErrorCode
void RegisterObjectId(pybind11::module_& module);      // object_id_binding.cc
void RegisterObjectInfo(pybind11::module_& module);    // object_info_binding.cc: ObjectInfo, ObjectEvent
void RegisterReadBuffer(pybind11::module_& module);    // read_buffer.cc
void RegisterWriteBuffer(pybind11::module_& module);   // write_buffer.cc
void RegisterSubscription(pybind11::module_& module);  // subscription_binding.cc
void RegisterClient(pybind11::module_& module);        // client_binding.cc: Client, connect

}  // namespace rplasma::python

#endif  // RPLASMA_CLIENT_PYTHON_BINDINGS_H_
