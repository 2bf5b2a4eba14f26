// rplasma._rplasma: the extension module behind the rplasma package (rplasma/__init__.py
// re-exports it). docs/PYTHON.md describes the API and its lifetime rules.
#include <pybind11/pybind11.h>

#include "client/python/bindings.h"

PYBIND11_MODULE(_rplasma, module) {
  module.doc() = "rplasma: zero-copy client of an rplasma-store (see docs/PYTHON.md)";
  rplasma::python::RegisterErrors(module);
  rplasma::python::RegisterObjectId(module);
  rplasma::python::RegisterObjectInfo(module);
  rplasma::python::RegisterReadBuffer(module);
  rplasma::python::RegisterWriteBuffer(module);
  rplasma::python::RegisterSubscription(module);
  rplasma::python::RegisterClient(module);
}
