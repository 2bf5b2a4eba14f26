// The exception classes live in the module's namespace, not in C++ globals: the translator looks
// them up on the module object, which costs a dict lookup on the error path only.
#include <Python.h>

#include "client/python/python_errors.h"

#include <string>

#include "client/python/bindings.h"
#include "protocol/base/status.h"

namespace rplasma::python {
namespace {

namespace py = pybind11;

constexpr const char* kModule = "rplasma._rplasma";

// Python builtins an rplasma error also is, so `except TimeoutError` and `except ValueError` work.
PyObject* ExtraBase(ErrorCode code) {
  switch (code) {
    case ErrorCode::kDeadlineExceeded: return PyExc_TimeoutError;
    case ErrorCode::kInvalidArgument: return PyExc_ValueError;
    case ErrorCode::kPermissionDenied: return PyExc_PermissionError;
    default: return nullptr;
  }
}

py::object NewException(const std::string& name, py::handle bases, const char* doc) {
  PyObject* type = PyErr_NewExceptionWithDoc((std::string("rplasma.") + name).c_str(), doc, bases.ptr(), nullptr);
  if (type == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(type);
}

void Translate(std::exception_ptr error) {
  try {
    if (error) std::rethrow_exception(error);
  } catch (const StatusError& e) {
    const ErrorCode code = ErrorCodeOf(e.status());
    const std::string message(e.status().message());
    py::module_ module = py::module_::import(kModule);
    const std::string name(ErrorCodeName(code));
    py::object type = py::hasattr(module, name.c_str()) ? module.attr(name.c_str()) : module.attr("Error");
    PyErr_SetString(type.ptr(), message.c_str());
  }
}

}  // namespace

void RegisterErrors(py::module_& module) {
  py::object base =
      NewException("Error", py::handle(PyExc_Exception),
                   "Base class of every rplasma error. Subclasses are named after the error code (ObjectNotFound, "
                   "DeadlineExceeded, ...); `code` is the numeric ErrorCode.");
  base.attr("code") = py::none();
  module.attr("Error") = base;
  for (uint16_t value = 1;; ++value) {
    const ErrorCode code = static_cast<ErrorCode>(value);
    const std::string name(ErrorCodeName(code));
    if (name == "Unknown") break;
    PyObject* extra = ExtraBase(code);
    py::tuple bases = extra != nullptr ? py::make_tuple(base, py::handle(extra)) : py::make_tuple(base);
    py::object type = NewException(name, bases, nullptr);
    type.attr("code") = value;
    module.attr(name.c_str()) = type;
  }
  module.attr("Timeout") = module.attr("DeadlineExceeded");
  py::register_exception_translator(&Translate);
}

}  // namespace rplasma::python
