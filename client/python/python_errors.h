// The Python face of rplasma's errors: one exception class per ErrorCode, all subclasses of
// rplasma.Error, and the C++ exception that carries an absl::Status up to pybind11.
//
// Binding code calls ThrowIfError / ValueOrThrow with the GIL held (after any blocking call has
// reacquired it); the translator registered by RegisterErrors turns a StatusError into
// rplasma.<ErrorCodeName>(message), e.g. rplasma.ObjectNotFound("get(ab12...): ...").
#ifndef RPLASMA_CLIENT_PYTHON_PYTHON_ERRORS_H_
#define RPLASMA_CLIENT_PYTHON_PYTHON_ERRORS_H_

#include <pybind11/pybind11.h>

#include <exception>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rplasma::python {

// A failed absl::Status on its way to Python.
class StatusError : public std::exception {
 public:
  explicit StatusError(absl::Status status) : status_(std::move(status)) {}
  const absl::Status& status() const { return status_; }
  const char* what() const noexcept override { return "rplasma status error"; }

 private:
  absl::Status status_;
};

inline void ThrowIfError(const absl::Status& status) {
  if (!status.ok()) throw StatusError(status);
}

template <typename T>
T ValueOrThrow(absl::StatusOr<T> value) {
  if (!value.ok()) throw StatusError(std::move(value).status());
  return std::move(value).value();
}

}  // namespace rplasma::python

#endif  // RPLASMA_CLIENT_PYTHON_PYTHON_ERRORS_H_
