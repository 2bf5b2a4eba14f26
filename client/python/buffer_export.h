// Buffer protocol with an export count, for the pybind11 classes that expose arena bytes.
//
// pybind11's def_buffer gives no hook when a consumer lets go of a view, so a type cannot tell
// whether memoryviews or numpy arrays over it are still alive. InstallBufferProtocol replaces
// the type's bf_getbuffer / bf_releasebuffer slots with ones that count exports, which is what
// lets release(), seal() and abort() refuse (BufferError) while bytes are still reachable — the
// rule bytearray and mmap follow for resize and close.
//
// T provides, all called with the GIL held:
//   const char* ExportRefusal() const;  // nullptr, or why no view may be taken now
//   uint8_t* export_data() const; size_t export_size() const; bool export_readonly() const;
//   int exports;                        // views alive; only these hooks change it
#ifndef RPLASMA_CLIENT_PYTHON_BUFFER_EXPORT_H_
#define RPLASMA_CLIENT_PYTHON_BUFFER_EXPORT_H_

#include <Python.h>
#include <pybind11/pybind11.h>

namespace rplasma::python {
namespace buffer_export_internal {

template <typename T>
T* Self(PyObject* self) {
  try {
    return pybind11::handle(self).cast<T*>();
  } catch (const pybind11::cast_error&) {
    return nullptr;
  }
}

template <typename T>
int GetBuffer(PyObject* self, Py_buffer* view, int flags) {
  view->obj = nullptr;
  T* object = Self<T>(self);
  if (object == nullptr) {
    PyErr_SetString(PyExc_BufferError, "rplasma buffer is not initialized");
    return -1;
  }
  if (const char* refusal = object->ExportRefusal(); refusal != nullptr) {
    PyErr_SetString(PyExc_BufferError, refusal);
    return -1;
  }
  // Sets view->obj = self (a new reference): the object, and through it the client, outlives the view.
  if (PyBuffer_FillInfo(view, self, object->export_data(), static_cast<Py_ssize_t>(object->export_size()),
                        object->export_readonly() ? 1 : 0, flags) != 0) {
    return -1;
  }
  ++object->exports;
  return 0;
}

template <typename T>
void ReleaseBuffer(PyObject* self, Py_buffer* /*view*/) {
  if (T* object = Self<T>(self); object != nullptr) --object->exports;
}

}  // namespace buffer_export_internal

// REQUIRES: `cls` was declared with pybind11::buffer_protocol() and has no def_buffer.
template <typename T, typename... Options>
void InstallBufferProtocol(pybind11::class_<T, Options...>& cls) {
  auto* heap_type = reinterpret_cast<PyHeapTypeObject*>(cls.ptr());
  heap_type->as_buffer.bf_getbuffer = &buffer_export_internal::GetBuffer<T>;
  heap_type->as_buffer.bf_releasebuffer = &buffer_export_internal::ReleaseBuffer<T>;
}

}  // namespace rplasma::python

#endif  // RPLASMA_CLIENT_PYTHON_BUFFER_EXPORT_H_
