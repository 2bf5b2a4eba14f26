// WriteBuffer (Python: rplasma.MutableBuffer): an object created by Client.create and not yet
// sealed — writable bytes inside the arena, exposed through the buffer protocol.
//
//   open --seal()--> sealed     (immutable, visible to every client; our reference dropped)
//     \---abort()--> aborted    (gone from the store; its arena bytes may belong to another object)
//     \---destroyed while open: aborted
//
// Writing through a view after seal would break the object's checksum, and after abort would
// write into someone else's object, so seal() and abort() raise BufferError while views are
// exported, and no view can be taken once the buffer is no longer open.
//
// Thread-safety: under the GIL; seal()/abort() mark the buffer closing before they give the GIL
// up, so a concurrent second call raises instead of racing.
#ifndef RPLASMA_CLIENT_PYTHON_WRITE_BUFFER_H_
#define RPLASMA_CLIENT_PYTHON_WRITE_BUFFER_H_

#include <pybind11/pybind11.h>

#include <cstdint>

#include "client/created_object.h"
#include "client/python/client_state.h"

namespace rplasma::python {

class WriteBuffer {
 public:
  enum class State { kOpen, kClosing, kSealed, kAborted };

  // Registers itself in client->open_writes. REQUIRES: the GIL is held.
  WriteBuffer(ClientHandle client, CreatedObject object);
  ~WriteBuffer();  // aborts an open object
  WriteBuffer(const WriteBuffer&) = delete;
  WriteBuffer& operator=(const WriteBuffer&) = delete;

  void Seal();
  void Abort();
  State state() const { return state_; }
  const ObjectID& id() const { return object_.id; }
  uint64_t size() const { return object_.data.size(); }

  // Buffer protocol (buffer_export.h).
  const char* ExportRefusal() const;
  uint8_t* export_data() const { return object_.data.data(); }
  size_t export_size() const { return object_.data.size(); }
  bool export_readonly() const { return false; }
  int exports = 0;

 private:
  // Checks that the buffer is open and unexported, then marks it closing.
  void BeginClose(const char* operation);
  void Unregister();

  const ClientHandle client_;
  const CreatedObject object_;
  State state_ = State::kOpen;
};

}  // namespace rplasma::python

#endif  // RPLASMA_CLIENT_PYTHON_WRITE_BUFFER_H_
