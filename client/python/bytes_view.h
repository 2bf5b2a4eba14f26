// BytesView: a C-contiguous view of any Python object with the buffer protocol (bytes, bytearray,
// memoryview, numpy arrays of any dtype...), held for the scope of one call so the bytes can be
// read with the GIL released (the exporter keeps them in place while the view exists: a
// bytearray cannot be resized, for instance). A non-contiguous array raises BufferError; an
// object without the protocol raises TypeError.
#ifndef RPLASMA_CLIENT_PYTHON_BYTES_VIEW_H_
#define RPLASMA_CLIENT_PYTHON_BYTES_VIEW_H_

#include <Python.h>
#include <pybind11/pybind11.h>

#include <cstdint>

#include "absl/types/span.h"

namespace rplasma::python {

class BytesView {
 public:
  explicit BytesView(pybind11::handle object) {
    if (PyObject_GetBuffer(object.ptr(), &view_, PyBUF_C_CONTIGUOUS) != 0) throw pybind11::error_already_set();
  }
  ~BytesView() { PyBuffer_Release(&view_); }  // REQUIRES: the GIL is held
  BytesView(const BytesView&) = delete;
  BytesView& operator=(const BytesView&) = delete;

  absl::Span<const uint8_t> span() const {
    return {static_cast<const uint8_t*>(view_.buf), static_cast<size_t>(view_.len)};
  }

 private:
  Py_buffer view_;
};

}  // namespace rplasma::python

#endif  // RPLASMA_CLIENT_PYTHON_BYTES_VIEW_H_
