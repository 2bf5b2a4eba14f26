// rplasma.ObjectID: the 20-byte object name (protocol/base/object_id.h) as an immutable, hashable,
// ordered, picklable Python value.
#include <pybind11/operators.h>
#include <pybind11/pybind11.h>

#include <string>

#include "client/python/bindings.h"
#include "client/python/python_errors.h"
#include "protocol/base/object_id.h"

namespace rplasma::python {

namespace py = pybind11;

namespace {

ObjectID FromBytes(const py::bytes& bytes) { return ValueOrThrow(ObjectID::FromBinary(std::string(bytes))); }

py::bytes ToBytes(const ObjectID& id) { return py::bytes(std::string(id.binary())); }

}  // namespace

void RegisterObjectId(py::module_& module) {
  py::class_<ObjectID>(module, "ObjectID", "The 20-byte name of an object; str() is 40 hex digits.")
      .def(py::init(&FromBytes), py::arg("binary"), "From exactly 20 bytes (InvalidArgument otherwise).")
      .def_static(
          "from_hex", [](const std::string& hex) { return ValueOrThrow(ObjectID::FromHex(hex)); }, py::arg("hex"),
          "From 40 hex digits.")
      .def_static(
          "from_label", [](const std::string& label) { return ObjectID::FromLabel(label); }, py::arg("label"),
          "A deterministic id derived from a text label (as the rplasma CLI does).")
      .def_static("random", &ObjectID::Random, "20 random bytes.")
      .def("hex", &ObjectID::Hex)
      .def("binary", &ToBytes)
      .def("__bytes__", &ToBytes)
      .def("__str__", &ObjectID::Hex)
      .def("__repr__", [](const ObjectID& id) { return "ObjectID('" + id.Hex() + "')"; })
      .def("__hash__", [](const ObjectID& id) { return py::hash(ToBytes(id)); })
      .def(py::self == py::self)
      .def(py::self != py::self)
      .def(py::self < py::self)
      .def(py::self <= py::self)
      .def(py::self > py::self)
      .def(py::self >= py::self)
      .def(py::pickle([](const ObjectID& id) { return py::make_tuple(ToBytes(id)); },
                      [](const py::tuple& state) { return FromBytes(state[0].cast<py::bytes>()); }));
}

}  // namespace rplasma::python
