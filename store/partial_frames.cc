#include "store/partial_frames.h"

namespace rplasma {

void PartialFrames::Update(ClientId id, uint64_t partial_bytes, uint64_t frames_completed, absl::Time now) {
  if (partial_bytes == 0) {
    Remove(id);
    return;
  }
  auto [it, inserted] = entries_.try_emplace(id);
  Entry& e = it->second;
  if (inserted || e.frames_completed != frames_completed) {
    // A new frame started (the first, or the one after a completed frame): its clock starts now.
    if (!inserted) by_start_.erase({e.started, id});
    e.started = now;
    e.frames_completed = frames_completed;
    by_start_.insert({now, id});
  }
  total_bytes_ = total_bytes_ - e.bytes + partial_bytes;
  e.bytes = partial_bytes;
}

void PartialFrames::Remove(ClientId id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  total_bytes_ -= it->second.bytes;
  by_start_.erase({it->second.started, id});
  entries_.erase(it);
}

std::optional<absl::Time> PartialFrames::NextDeadline() const {
  if (by_start_.empty()) return std::nullopt;
  return by_start_.begin()->first + timeout_;
}

std::vector<ClientId> PartialFrames::Expired(absl::Time now) const {
  std::vector<ClientId> expired;
  for (const auto& [started, id] : by_start_) {
    if (started + timeout_ > now) break;
    expired.push_back(id);
  }
  return expired;
}

std::optional<ClientId> PartialFrames::Largest() const {
  std::optional<ClientId> largest;
  uint64_t most = 0;
  for (const auto& [id, e] : entries_) {
    if (e.bytes > most || (e.bytes == most && largest.has_value() && id < *largest)) {
      most = e.bytes;
      largest = id;
    }
  }
  return largest;
}

}  // namespace rplasma
