#include "client/python/read_buffer.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

#include "client/python/bindings.h"
#include "client/python/buffer_export.h"
#include "client/python/python_errors.h"

namespace rplasma::python {

namespace py = pybind11;

ReadBuffer::~ReadBuffer() {
  if (!buffer_.valid()) return;
  // The release is a write on the store socket: never block other Python threads on it.
  ObjectBuffer taken = std::move(buffer_);
  py::gil_scoped_release nogil;
  (void)taken.Release();
}

void ReadBuffer::Release() {
  if (exports > 0) {
    throw py::buffer_error(absl::StrCat("release(", id_.Hex(), "): ", exports,
                                        " view(s) of the buffer still exported (memoryview, numpy array...)"));
  }
  if (!buffer_.valid()) return;
  ObjectBuffer taken = std::move(buffer_);
  absl::Status status;
  {
    py::gil_scoped_release nogil;
    status = taken.Release();
  }
  ThrowIfError(status);
}

py::bytes ReadBuffer::metadata() const {
  if (!buffer_.valid()) throw py::buffer_error(absl::StrCat("metadata(", id_.Hex(), "): buffer released"));
  absl::Span<const uint8_t> bytes = buffer_.metadata();
  return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

const char* ReadBuffer::ExportRefusal() const {
  return buffer_.valid() ? nullptr : "rplasma.Buffer was released: its bytes are no longer readable";
}

void RegisterReadBuffer(py::module_& module) {
  py::class_<ReadBuffer> cls(module, "Buffer", py::buffer_protocol(),
                             "A sealed object: read-only zero-copy bytes in the store's arena (buffer protocol).\n"
                             "Holds a store reference until release() or until it and every view of it are gone.");
  InstallBufferProtocol(cls);
  cls.def_property_readonly("id", &ReadBuffer::id, "the ObjectID")
      .def_property_readonly("size", &ReadBuffer::size, "bytes of data")
      .def_property_readonly("metadata", &ReadBuffer::metadata, "a copy of the metadata (bytes)")
      .def_property_readonly("released", &ReadBuffer::released)
      .def_property_readonly(
          "exports", [](const ReadBuffer& b) { return b.exports; },
          "views (memoryview, numpy arrays...) alive over this buffer")
      .def_property_readonly("generation", [](const ReadBuffer& b) { return b.info().generation; })
      .def_property_readonly("checksum", [](const ReadBuffer& b) { return b.info().checksum; })
      .def("release", &ReadBuffer::Release,
           "Drops the store reference now (idempotent). BufferError while views are exported.")
      .def("__len__", [](const ReadBuffer& b) { return b.size(); })
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](ReadBuffer& b, py::args) { b.Release(); })
      .def("__repr__", [](const ReadBuffer& b) {
        return absl::StrCat("rplasma.Buffer(", b.id().Hex(), ", size=", b.size(), b.released() ? ", released" : "",
                            ")");
      });
}

}  // namespace rplasma::python
