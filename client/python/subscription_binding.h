// PySubscription (Python: rplasma.Subscription): Client.subscribe()'s stream of store events as a
// Python iterator.
//
// Iteration waits for the next event with the GIL released, in slices of 100 ms so Ctrl-C
// (KeyboardInterrupt) still gets through; it ends (StopIteration) when the store closes the
// stream. next_event(timeout_ms) is the bounded form: None when nothing arrived in time.
// One reader at a time, as client/client.h's Subscription requires: a second thread calling in
// while one waits gets RuntimeError (the flag is guarded by the GIL).
#ifndef RPLASMA_CLIENT_PYTHON_SUBSCRIPTION_BINDING_H_
#define RPLASMA_CLIENT_PYTHON_SUBSCRIPTION_BINDING_H_

#include <memory>
#include <optional>

#include "absl/time/time.h"

#include "client/client.h"

namespace rplasma::python {

class PySubscription {
 public:
  explicit PySubscription(std::unique_ptr<Subscription> subscription) : subscription_(std::move(subscription)) {}

  // The next event within `timeout` (InfiniteDuration: until one arrives); nullopt on timeout, or
  // with *ended set once the store closed the stream.
  std::optional<ObjectEvent> Next(absl::Duration timeout, bool* ended);
  int fileno() const;
  void Close();

 private:
  std::unique_ptr<Subscription> subscription_;
  bool busy_ = false;  // a thread waits in Next; guarded by the GIL
};

}  // namespace rplasma::python

#endif  // RPLASMA_CLIENT_PYTHON_SUBSCRIPTION_BINDING_H_
