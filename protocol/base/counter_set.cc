#include "protocol/base/counter_set.h"

#include <algorithm>

#include "protocol/base/logging.h"

namespace rplasma {

bool CounterSnapshot::contains(absl::string_view name) const {
  return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.name == name; });
}

uint64_t CounterSnapshot::operator[](absl::string_view name) const {
  for (const Entry& e : entries_) {
    if (e.name == name) return e.value;
  }
  CHECK(false) << "no counter named \"" << name << "\" in this snapshot";
  return 0;
}

void CounterSnapshot::Set(absl::string_view name, uint64_t value) {
  for (Entry& e : entries_) {
    if (e.name == name) {
      e.value = value;
      return;
    }
  }
  CHECK(false) << "no counter named \"" << name << "\" in this snapshot";
}

JsonObject CounterSnapshot::ToJson() const {
  JsonObject json;
  for (const Entry& e : entries_) json.Number(e.name, e.value);
  return json;
}

CounterSnapshot CounterSet::Snapshot() const {
  CounterSnapshot snapshot;
  snapshot.entries_.reserve(members_.size());
  for (const auto& [name, read] : members_) snapshot.entries_.push_back({name, read()});
  return snapshot;
}

void CounterSet::Register(absl::string_view name, std::function<uint64_t()> read) {
  for (const auto& member : members_) CHECK(member.first != name) << "counter \"" << name << "\" declared twice";
  members_.emplace_back(name, std::move(read));
}

Counter::Counter(CounterSet* set, absl::string_view name) {
  set->Register(name, [this] { return load(); });
}

Gauge::Gauge(CounterSet* set, absl::string_view name) {
  // A gauge decremented once too often (a close counted twice) reads as 0, not as 2^64 - 1.
  set->Register(name, [this] { return static_cast<uint64_t>(std::max<int64_t>(load(), 0)); });
}

Reading::Reading(CounterSet* set, absl::string_view name, std::function<uint64_t()> read) {
  set->Register(name, std::move(read));
}

}  // namespace rplasma
