// CounterSet: named statistics declared once, as members, and read together.
//
//   struct TransportCounters : CounterSet {
//     Counter tx_bytes{this, "tx_bytes"};          // adding a counter is this one line
//     Gauge connections{this, "connections"};
//   };
//   counters.tx_bytes.fetch_add(n);               // any thread; relaxed unless told otherwise
//   CounterSnapshot s = counters.Snapshot();      // {"tx_bytes", n}, {"connections", 1}
//   s.ToJson().str();                             // {"tx_bytes":n,"connections":1}
//
// Each member registers its name with the set it is given when it is constructed, so a snapshot
// lists the values in declaration order. Three kinds of member:
//   Counter — a uint64 atomic that only grows (events, bytes).
//   Gauge   — an int64 atomic that goes up and down (open connections); a snapshot reads a
//             negative value (a double decrement) as 0.
//   Reading — a function evaluated at snapshot time, for values another object keeps (a table's
//             size). It runs on the snapshotting thread: it must be thread-safe.
// Counters and gauges use relaxed ordering by default: they count, they do not synchronise.
// Their fetch_add / fetch_sub / load mirror std::atomic, so call sites read the same.
//
// REQUIRES: names are string literals (they are kept as views), unique within their set.
// Thread-safety: members are constructed with their set (one thread); after that, updates and
// Snapshot are thread-safe. A set is neither copyable nor movable (members point into it).
#ifndef RPLASMA_PROTOCOL_BASE_COUNTER_SET_H_
#define RPLASMA_PROTOCOL_BASE_COUNTER_SET_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

#include "protocol/base/json_writer.h"

namespace rplasma {

// A counter set's values at one moment, in declaration order. A value type.
class CounterSnapshot {
 public:
  struct Entry {
    absl::string_view name;
    uint64_t value = 0;
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
  void Register(absl::string_view name, std::function<uint64_t()> read);

  std::vector<std::pair<absl::string_view, std::function<uint64_t()>>> members_;
};

class Counter {
 public:
  Counter(CounterSet* set, absl::string_view name);
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
  Gauge(const Gauge&) = delete;
  Gauge& operator=(const Gauge&) = delete;

  int64_t fetch_add(int64_t n, std::memory_order order = std::memory_order_relaxed) {
    return value_.fetch_add(n, order);
  }
  int64_t fetch_sub(int64_t n, std::memory_order order = std::memory_order_relaxed) {
    return value_.fetch_sub(n, order);
  }
  int64_t load(std::memory_order order = std::memory_order_relaxed) const { return value_.load(order); }

 private:
  std::atomic<int64_t> value_{0};
};

class Reading {
 public:
  Reading(CounterSet* set, absl::string_view name, std::function<uint64_t()> read);
  Reading(const Reading&) = delete;
  Reading& operator=(const Reading&) = delete;
};

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_BASE_COUNTER_SET_H_
