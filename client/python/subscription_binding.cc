#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "client/python/subscription_binding.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>

#include "client/client.h"
#include "client/python/bindings.h"
#include "client/python/python_errors.h"
#include "protocol/base/status.h"

namespace rplasma::python {

namespace py = pybind11;

namespace {

constexpr absl::Duration kSignalCheck = absl::Milliseconds(100);

}  // namespace

std::optional<ObjectEvent> PySubscription::Next(absl::Duration timeout, bool* ended) {
  if (subscription_ == nullptr) throw py::value_error("subscription is closed");
  if (busy_) throw std::runtime_error("subscription: another thread is already waiting for an event");
  busy_ = true;
  struct Done {
    bool* busy;
    ~Done() { *busy = false; }
  } done{&busy_};
  const absl::Time deadline = timeout == absl::InfiniteDuration() ? absl::InfiniteFuture() : absl::Now() + timeout;
  for (;;) {
    const absl::Duration slice = std::min(kSignalCheck, std::max(deadline - absl::Now(), absl::ZeroDuration()));
    absl::StatusOr<ObjectEvent> event;
    {
      py::gil_scoped_release nogil;
      event = subscription_->Next(slice);
    }
    if (event.ok()) return *std::move(event);
    const ErrorCode code = ErrorCodeOf(event.status());
    if (code == ErrorCode::kUnavailable) {
      *ended = true;
      return std::nullopt;
    }
    if (code != ErrorCode::kDeadlineExceeded) throw StatusError(event.status());
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (absl::Now() >= deadline) return std::nullopt;
  }
}

int PySubscription::fileno() const {
  if (subscription_ == nullptr) throw py::value_error("subscription is closed");
  return subscription_->fd();
}

void PySubscription::Close() {
  if (busy_) throw std::runtime_error("subscription: close() while another thread waits for an event");
  subscription_.reset();
}

void RegisterSubscription(py::module_& module) {
  py::class_<PySubscription>(module, "Subscription",
                             "Seal/delete/evict events of the store (existing sealed objects first if asked).\n"
                             "Iterate it, or call next_event(timeout_ms).")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__",
           [](PySubscription& s) {
             bool ended = false;
             std::optional<ObjectEvent> event = s.Next(absl::InfiniteDuration(), &ended);
             if (!event) throw py::stop_iteration();
             return *event;
           })
      .def(
          "next_event",
          [](PySubscription& s, int64_t timeout_ms) -> std::optional<ObjectEvent> {
            bool ended = false;
            std::optional<ObjectEvent> event =
                s.Next(timeout_ms < 0 ? absl::InfiniteDuration() : absl::Milliseconds(timeout_ms), &ended);
            if (ended) ThrowIfError(MakeError(ErrorCode::kUnavailable, "subscription: the store closed the stream"));
            return event;
          },
          py::arg("timeout_ms") = -1,
          "The next event, or None if none arrived within timeout_ms (negative: wait). "
          "Unavailable once the store closed the stream.")
      .def("fileno", &PySubscription::fileno, "readable when an event is pending (select/poll)")
      .def("close", &PySubscription::Close)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PySubscription& s, py::args) { s.Close(); });
}

}  // namespace rplasma::python
