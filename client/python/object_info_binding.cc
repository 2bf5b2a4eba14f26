// rplasma.ObjectInfo (a row of Client.list()) and rplasma.ObjectEvent (what Subscription yields):
// read-only views of protocol/store_messages.h's ObjectInfo and ObjectEvent, copied by value.
#include <pybind11/pybind11.h>

#include <string>

#include "absl/strings/str_cat.h"

#include "client/python/bindings.h"
#include "protocol/store_messages.h"

namespace rplasma::python {

namespace py = pybind11;

namespace {

const char* StateName(ObjectState state) { return state == ObjectState::kSealed ? "sealed" : "created"; }

const char* KindName(EventKind kind) {
  switch (kind) {
    case EventKind::kSealed: return "sealed";
    case EventKind::kDeleted: return "deleted";
    case EventKind::kEvicted: return "evicted";
  }
  return "unknown";
}

}  // namespace

void RegisterObjectInfo(py::module_& module) {
  py::class_<ObjectInfo>(module, "ObjectInfo", "One object as the store describes it.")
      .def_readonly("id", &ObjectInfo::id)
      .def_property_readonly(
          "state", [](const ObjectInfo& info) { return StateName(info.state); },
          "'created' (not sealed yet) or 'sealed'")
      .def_readonly("data_size", &ObjectInfo::data_size)
      .def_readonly("metadata_size", &ObjectInfo::metadata_size)
      .def_readonly("generation", &ObjectInfo::generation)
      .def_readonly("checksum", &ObjectInfo::checksum)
      .def_readonly("ref_count", &ObjectInfo::ref_count)
      .def("__repr__", [](const ObjectInfo& info) {
        return absl::StrCat("rplasma.ObjectInfo(", info.id.Hex(), ", ", StateName(info.state),
                            ", data_size=", info.data_size, ", metadata_size=", info.metadata_size,
                            ", ref_count=", info.ref_count, ")");
      });
  py::class_<ObjectEvent>(module, "ObjectEvent", "A seal, delete or eviction seen by a Subscription.")
      .def_property_readonly(
          "kind", [](const ObjectEvent& event) { return KindName(event.kind); }, "'sealed', 'deleted' or 'evicted'")
      .def_readonly("object", &ObjectEvent::object)
      .def_property_readonly("id", [](const ObjectEvent& event) { return event.object.id; })
      .def("__repr__", [](const ObjectEvent& event) {
        return absl::StrCat("rplasma.ObjectEvent(", KindName(event.kind), ", ", event.object.id.Hex(), ")");
      });
}

}  // namespace rplasma::python
