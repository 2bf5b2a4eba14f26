// ReadBuffer (Python: rplasma.Buffer): a sealed object returned by Client.get — read-only,
// zero-copy bytes inside the arena, exposed through the buffer protocol (memoryview(buf),
// numpy.frombuffer(buf, dtype) read the arena in place).
//
// Lifetime: the buffer holds one store reference on its object and a ClientHandle, so the
// connection and mapping outlive it. Every memoryview / numpy array over it holds the buffer
// (Py_buffer.obj), so the reference lives while any view does. release() drops the reference
// early; it raises BufferError while views are still exported. Dropping the last Python
// reference releases it too.
//
// Thread-safety: Python code only, under the GIL; release() gives the GIL up while it talks to
// the store, after taking the reference out of the buffer, so a second release() is a no-op.
#ifndef RPLASMA_CLIENT_PYTHON_READ_BUFFER_H_
#define RPLASMA_CLIENT_PYTHON_READ_BUFFER_H_

#include <pybind11/pybind11.h>

#include <cstdint>

#include "client/client.h"
#include "client/python/client_state.h"

namespace rplasma::python {

class ReadBuffer {
 public:
  ReadBuffer(ClientHandle client, ObjectBuffer buffer) : client_(std::move(client)), buffer_(std::move(buffer)) {}
  ~ReadBuffer();
  ReadBuffer(const ReadBuffer&) = delete;
  ReadBuffer& operator=(const ReadBuffer&) = delete;

  // Drops the store reference. Idempotent. BufferError while views are exported.
  void Release();
  bool released() const { return !buffer_.valid(); }
  const ObjectID& id() const { return id_; }
  uint64_t size() const { return info_.data_size; }
  // A copy of the object's metadata (metadata is small; a view would pin the reference again).
  pybind11::bytes metadata() const;
  const ObjectInfo& info() const { return info_; }

  // Buffer protocol (buffer_export.h).
  const char* ExportRefusal() const;
  uint8_t* export_data() const { return const_cast<uint8_t*>(buffer_.data().data()); }
  size_t export_size() const { return buffer_.data().size(); }
  bool export_readonly() const { return true; }
  int exports = 0;

 private:
  const ClientHandle client_;  // declared before buffer_: the client outlives the reference
  ObjectBuffer buffer_;
  const ObjectID id_ = buffer_.id();
  const ObjectInfo info_ = buffer_.info();
};

}  // namespace rplasma::python

#endif  // RPLASMA_CLIENT_PYTHON_READ_BUFFER_H_
