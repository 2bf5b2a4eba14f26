#include "manager/transport/verbs/call_table.h"

#include <utility>

namespace rplasma::transport::verbs {

uint64_t CallTable::Add(Call* call) {
  const uint64_t id = next_id_++;
  calls_[id] = call;
  return id;
}

bool CallTable::Complete(uint64_t id, absl::StatusOr<std::string> result) {
  auto it = calls_.find(id);
  if (it == calls_.end() || it->second->done) return false;
  it->second->done = true;
  it->second->result = std::move(result);
  return true;
}

void CallTable::FailAll(const absl::Status& error) {
  for (auto& [id, call] : calls_) {
    if (call->done) continue;
    call->done = true;
    call->result = error;
  }
}

}  // namespace rplasma::transport::verbs
