#include "client/python/write_buffer.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

#include "client/checksum.h"
#include "client/python/bindings.h"
#include "client/python/buffer_export.h"
#include "client/python/python_errors.h"

namespace rplasma::python {

namespace py = pybind11;

WriteBuffer::WriteBuffer(ClientHandle client, CreatedObject object)
    : client_(std::move(client)), object_(std::move(object)) {
  client_->open_writes[object_.id] = this;
}

WriteBuffer::~WriteBuffer() {
  if (state_ != State::kOpen) return;
  Unregister();
  py::gil_scoped_release nogil;
  (void)client_->client->Abort(object_.id);
}

void WriteBuffer::Unregister() {
  auto it = client_->open_writes.find(object_.id);
  if (it != client_->open_writes.end() && it->second == this) client_->open_writes.erase(it);
}

void WriteBuffer::BeginClose(const char* operation) {
  if (state_ != State::kOpen) {
    throw py::value_error(absl::StrCat(operation, "(", object_.id.Hex(), "): the object is ",
                                       state_ == State::kClosing  ? "being closed by another thread"
                                       : state_ == State::kSealed ? "already sealed"
                                                                  : "already aborted"));
  }
  if (exports > 0) {
    throw py::buffer_error(absl::StrCat(operation, "(", object_.id.Hex(), "): ", exports,
                                        " writable view(s) still exported (memoryview, numpy array...)"));
  }
  state_ = State::kClosing;
}

void WriteBuffer::Seal() {
  BeginClose("seal");
  absl::Status status;
  {
    py::gil_scoped_release nogil;
    // One round trip: the checksum here, then seal and drop the creator's reference together.
    const uint64_t checksum = ObjectChecksum(object_.data, object_.metadata);
    status = client_->client->SealAndRelease(object_.id, checksum);
  }
  if (!status.ok()) {
    state_ = State::kOpen;  // the reference is kept: the caller may abort
    throw StatusError(status);
  }
  state_ = State::kSealed;
  Unregister();
}

void WriteBuffer::Abort() {
  BeginClose("abort");
  Unregister();
  absl::Status status;
  {
    py::gil_scoped_release nogil;
    status = client_->client->Abort(object_.id);
  }
  state_ = State::kAborted;  // whatever the store said, these bytes are not ours to write any more
  ThrowIfError(status);
}

const char* WriteBuffer::ExportRefusal() const {
  switch (state_) {
    case State::kOpen: return nullptr;
    case State::kClosing: return "rplasma.MutableBuffer is being sealed or aborted";
    case State::kSealed: return "rplasma.MutableBuffer was sealed: get() the object to read it";
    case State::kAborted: return "rplasma.MutableBuffer was aborted";
  }
  return "rplasma.MutableBuffer is closed";
}

void RegisterWriteBuffer(py::module_& module) {
  py::class_<WriteBuffer> cls(module, "MutableBuffer", py::buffer_protocol(),
                              "An object being written: writable bytes in the store's arena (buffer protocol).\n"
                              "seal() publishes it, abort() discards it; dropped while open, it is aborted.");
  InstallBufferProtocol(cls);
  cls.def_property_readonly("id", &WriteBuffer::id)
      .def_property_readonly("size", &WriteBuffer::size)
      .def_property_readonly("exports", [](const WriteBuffer& b) { return b.exports; })
      .def_property_readonly("state",
                             [](const WriteBuffer& b) {
                               switch (b.state()) {
                                 case WriteBuffer::State::kOpen: return "open";
                                 case WriteBuffer::State::kClosing: return "closing";
                                 case WriteBuffer::State::kSealed: return "sealed";
                                 case WriteBuffer::State::kAborted: return "aborted";
                               }
                               return "unknown";
                             })
      .def("seal", &WriteBuffer::Seal,
           "Makes the object immutable and visible, and drops this client's reference. "
           "BufferError while views are exported.")
      .def("abort", &WriteBuffer::Abort, "Discards the object. BufferError while views are exported.")
      .def("__len__", [](const WriteBuffer& b) { return b.size(); })
      .def("__repr__", [](const WriteBuffer& b) {
        return absl::StrCat("rplasma.MutableBuffer(", b.id().Hex(), ", size=", b.size(), ")");
      });
}

}  // namespace rplasma::python
