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
  for (const Member& member : members_) {
    snapshot.entries_.push_back(member.entry);
    snapshot.entries_.back().value = member.read();
  }
  return snapshot;
}

void CounterSet::Register(CounterSnapshot::Entry entry, std::function<uint64_t()> read) {
  for (const Member& member : members_) {
    CHECK(member.entry.name != entry.name) << "counter \"" << entry.name << "\" declared twice";
  }
  members_.push_back({entry, std::move(read)});
}

Counter::Counter(CounterSet* set, absl::string_view name) : Counter(set, name, {}, {}) {}

Counter::Counter(CounterSet* set, absl::string_view name, absl::string_view metric, absl::string_view help) {
  set->Register({name, 0, metric, help, MetricType::kCounter}, [this] { return load(); });
}

Gauge::Gauge(CounterSet* set, absl::string_view name) : Gauge(set, name, {}, {}) {}

Gauge::Gauge(CounterSet* set, absl::string_view name, absl::string_view metric, absl::string_view help) {
  // A gauge decremented once too often (a close counted twice) reads as 0, not as 2^64 - 1.
  set->Register({name, 0, metric, help, MetricType::kGauge},
                [this] { return static_cast<uint64_t>(std::max<int64_t>(load(), 0)); });
}

Reading::Reading(CounterSet* set, absl::string_view name, std::function<uint64_t()> read)
    : Reading(set, name, MetricType::kGauge, {}, {}, std::move(read)) {}

Reading::Reading(CounterSet* set, absl::string_view name, MetricType type, absl::string_view metric,
                 absl::string_view help, std::function<uint64_t()> read) {
  CHECK(type != MetricType::kHistogram) << "reading \"" << name << "\": a single value is a counter or a gauge";
  set->Register({name, 0, metric, help, type}, std::move(read));
}

}  // namespace rplasma
