// CounterSet: named statistics declared once, as members, and read together.
//
//   struct TransportCounters : CounterSet {
//     Counter tx_bytes{this, "tx_bytes"};                // JSON only
//     Counter errors{this, "errors", "rplasma_manager_transport_errors_total",
//                    "Failed peer calls and reads."};   // JSON and Prometheus: still one line
//     Gauge connections{this, "connections", "rplasma_manager_transport_connections", "Open peer connections."};
//   };
//   counters.tx_bytes.fetch_add(n);               // any thread; relaxed unless told otherwise
//   CounterSnapshot s = counters.Snapshot();      // {"tx_bytes", n}, {"errors", 0}, {"connections", 1}
//   s.ToJson().str();                             // {"tx_bytes":n,"errors":0,"connections":1}
//   AppendCounters(text, s);                      // protocol/metrics/counter_set_text.h: HELP, TYPE, sample
//
// Each member registers its name with the set it is given when it is constructed, so a snapshot
// lists the values in declaration order. Three kinds of member:
//   Counter — a uint64 atomic that only grows (events, bytes).
//   Gauge   — an int64 atomic that goes up and down (open connections); a snapshot reads a
//             negative value (a double decrement) as 0.
//   Reading — a function evaluated at snapshot time, for values another object keeps (a table's
//             size). It runs on the snapshotting thread: it must be thread-safe.
// Counters and gauges use relaxed ordering by default: they count, they do not synchronise.
// Their fetch_add / fetch_sub / load / store mirror std::atomic, so call sites read the same.
//
// A member may also carry its Prometheus metric: a name and a HELP text, its type following from
// the member (Counter: counter, Gauge: gauge; a Reading is given its type). The snapshot keeps
// them with the value, so a set renders itself; a member without a metric is in the JSON only.
//
// REQUIRES: names, metric names and help texts are string literals (they are kept as views);
// names unique within their set.
// Thread-safety: members are constructed with their set (one thread); after that, updates and
// Snapshot are thread-safe. A set is neither copyable nor movable (members point into it).
#ifndef RPLASMA_PROTOCOL_BASE_COUNTER_SET_H_
#define RPLASMA_PROTOCOL_BASE_COUNTER_SET_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/strings/string_view.h"

#include "protocol/base/json_writer.h"
#include "protocol/base/metric_type.h"

namespace rplasma {

// A counter set's values at one moment, in declaration order. A value type.
class CounterSnapshot {
 public:
  struct Entry {
    absl::string_view name;
    uint64_t value = 0;
    absl::string_view metric;  // the Prometheus name; empty: JSON only
    absl::string_view help;
    MetricType type = MetricType::kCounter;
  };

  const std::vector<Entry>& entries() const { return entries_; }
  bool contains(absl::string_view name) const;
  // The value named `name`. REQUIRES: contains(name) (CHECKed: a wrong name is a bug in the caller).
  uint64_t operator[](absl::string_view name) const;
  // Replaces the value named `name` (for a value its set cannot see). REQUIRES: contains(name).
  void Set(absl::string_view name, uint64_t value);

  // One member per entry: {"name":value,...}.
  JsonObject ToJson() const;

 private:
  friend class CounterSet;
  std::vector<Entry> entries_;
};

class CounterSet {
 public:
  CounterSet() = default;
  CounterSet(const CounterSet&) = delete;
  CounterSet& operator=(const CounterSet&) = delete;

  CounterSnapshot Snapshot() const;

 private:
  friend class Counter;
  friend class Gauge;
  friend class Reading;
  struct Member {
    CounterSnapshot::Entry entry;  // all but the value
    std::function<uint64_t()> read;
  };
  void Register(CounterSnapshot::Entry entry, std::function<uint64_t()> read);

  std::vector<Member> members_;
};

class Counter {
 public:
  Counter(CounterSet* set, absl::string_view name);
  // Also the Prometheus counter `metric` (by convention ending in _total).
  Counter(CounterSet* set, absl::string_view name, absl::string_view metric, absl::string_view help);
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  uint64_t fetch_add(uint64_t n, std::memory_order order = std::memory_order_relaxed) {
    return value_.fetch_add(n, order);
  }
  uint64_t load(std::memory_order order = std::memory_order_relaxed) const { return value_.load(order); }

 private:
  std::atomic<uint64_t> value_{0};
};

class Gauge {
 public:
  Gauge(CounterSet* set, absl::string_view name);
  // Also the Prometheus gauge `metric`.
  Gauge(CounterSet* set, absl::string_view name, absl::string_view metric, absl::string_view help);
  Gauge(const Gauge&) = delete;
  Gauge& operator=(const Gauge&) = delete;

  int64_t fetch_add(int64_t n, std::memory_order order = std::memory_order_relaxed) {
    return value_.fetch_add(n, order);
  }
  int64_t fetch_sub(int64_t n, std::memory_order order = std::memory_order_relaxed) {
    return value_.fetch_sub(n, order);
  }
  int64_t load(std::memory_order order = std::memory_order_relaxed) const { return value_.load(order); }
  // For a gauge that mirrors a value kept elsewhere (published, not counted).
  void store(int64_t value, std::memory_order order = std::memory_order_relaxed) { value_.store(value, order); }

 private:
  std::atomic<int64_t> value_{0};
};

class Reading {
 public:
  Reading(CounterSet* set, absl::string_view name, std::function<uint64_t()> read);
  // Also the Prometheus metric `metric` of `type` (kCounter or kGauge).
  Reading(CounterSet* set, absl::string_view name, MetricType type, absl::string_view metric, absl::string_view help,
          std::function<uint64_t()> read);
  Reading(const Reading&) = delete;
  Reading& operator=(const Reading&) = delete;
};

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_BASE_COUNTER_SET_H_
