// CallTable: the active side's calls waiting for their replies, by request id.
//
// A caller adds its call, sends the request under the returned id, waits until the call is done,
// and removes it (whether or not a reply came). A reply for an id no longer in the table (its caller
// gave up) is dropped. When the connection fails every waiting call is done with the error.
//
// Not thread-safe: the endpoint calls it under its mutex. Device-free.
#ifndef RPLASMA_MANAGER_TRANSPORT_VERBS_CALL_TABLE_H_
#define RPLASMA_MANAGER_TRANSPORT_VERBS_CALL_TABLE_H_

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rplasma::transport::verbs {

class CallTable {
 public:
  struct Call {
    bool done = false;
    absl::StatusOr<std::string> result;
  };

  // Borrows `call` until Remove(id); returns its request id (never 0, never reused).
  uint64_t Add(Call* call);
  void Remove(uint64_t id) { calls_.erase(id); }
  // The reply to `id`. Returns false (and drops it) when no call waits for it.
  bool Complete(uint64_t id, absl::StatusOr<std::string> result);
  // Every call not yet done is done with `error`.
  void FailAll(const absl::Status& error);

  size_t size() const { return calls_.size(); }

 private:
  uint64_t next_id_ = 1;
  absl::flat_hash_map<uint64_t, Call*> calls_;
};

}  // namespace rplasma::transport::verbs

#endif  // RPLASMA_MANAGER_TRANSPORT_VERBS_CALL_TABLE_H_
