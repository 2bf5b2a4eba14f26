#include "store/get_waiters.h"

#include <algorithm>

namespace rplasma {

void GetWaiters::Add(PendingGet get) {
  GetId gid = next_id_++;
  for (size_t i = 0; i < get.objects.size(); ++i) {
    if (!get.served[i]) by_id_[get.objects[i].id].emplace_back(gid, i);
  }
  if (get.deadline != absl::InfiniteFuture()) deadlines_.emplace(get.deadline, gid);
  gets_.emplace(gid, std::move(get));
}

std::vector<PendingGet> GetWaiters::OnSealed(const ObjectID& id, const TakeRef& take_ref) {
  std::vector<PendingGet> done;
  auto node = by_id_.extract(id);
  if (node.empty()) return done;
  for (auto [gid, index] : node.mapped()) {
    auto it = gets_.find(gid);
    if (it == gets_.end() || it->second.served[index]) continue;
    absl::StatusOr<ObjectInfo> info = take_ref(it->second.client);
    if (!info.ok()) continue;  // cannot happen right after a seal; leave the entry unserved
    it->second.objects[index] = *info;
    it->second.served[index] = true;
    const std::vector<bool>& served = it->second.served;
    if (std::all_of(served.begin(), served.end(), [](bool b) { return b; })) {
      done.push_back(std::move(it->second));
      gets_.erase(it);
    }
  }
  // Gets completed here have no other unserved entries left in by_id_; nothing to unlink.
  return done;
}

std::vector<PendingGet> GetWaiters::Expire(absl::Time now) {
  std::vector<PendingGet> done;
  while (!deadlines_.empty() && deadlines_.top().first <= now) {
    GetId gid = deadlines_.top().second;
    deadlines_.pop();
    auto it = gets_.find(gid);
    if (it == gets_.end()) continue;  // already completed or removed
    Unlink(gid, it->second);
    done.push_back(std::move(it->second));
    gets_.erase(it);
  }
  return done;
}

void GetWaiters::RemoveClient(ClientId client) {
  for (auto it = gets_.begin(); it != gets_.end();) {
    if (it->second.client == client) {
      Unlink(it->first, it->second);
      gets_.erase(it++);
    } else {
      ++it;
    }
  }
}

std::optional<absl::Time> GetWaiters::NextDeadline() {
  while (!deadlines_.empty() && !gets_.contains(deadlines_.top().second)) deadlines_.pop();
  if (deadlines_.empty()) return std::nullopt;
  return deadlines_.top().first;
}

void GetWaiters::Unlink(GetId gid, const PendingGet& get) {
  for (size_t i = 0; i < get.objects.size(); ++i) {
    if (get.served[i]) continue;
    auto it = by_id_.find(get.objects[i].id);
    if (it == by_id_.end()) continue;
    auto& v = it->second;
    v.erase(std::remove_if(v.begin(), v.end(), [&](const auto& e) { return e.first == gid; }), v.end());
    if (v.empty()) by_id_.erase(it);
  }
}

}  // namespace rplasma
