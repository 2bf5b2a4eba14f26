// StoreMetrics: what rplasma-store exposes to Prometheus (docs/METRICS.md), read without ever
// stopping the event loop.
//
// The loop owns the store's state (StoreServer), so it is the only writer here: it counts each
// request and each table event as it handles them, and after every loop iteration publishes the
// StatsReply it would answer a Stats request with. All of it lands in relaxed atomics (counter
// sets, each member declared with its metric); Render, on any thread (the /metrics server's, the
// textfile writer's), reads them. A rendering may mix two consecutive iterations' gauges, never a
// torn value.
//
// Thread-safety: CountRequest, CountEvent, Publish from the loop thread only; Render from any.
#ifndef RPLASMA_STORE_STORE_METRICS_H_
#define RPLASMA_STORE_STORE_METRICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <variant>

#include "absl/strings/string_view.h"

#include "protocol/base/counter_set.h"
#include "protocol/store_messages.h"

namespace rplasma {

class StoreMetrics {
 public:
  static constexpr size_t kRequestKinds = std::variant_size_v<RequestBody>;

  StoreMetrics() = default;
  StoreMetrics(const StoreMetrics&) = delete;
  StoreMetrics& operator=(const StoreMetrics&) = delete;

  // A request of kind `body.index()` was handled.
  void CountRequest(size_t kind) {
    if (kind < kRequestKinds) requests_[kind].fetch_add(1, std::memory_order_relaxed);
  }
  // The table sealed, deleted or evicted an object of `bytes` (data + metadata).
  void CountEvent(EventKind kind, uint64_t bytes);
  // The store's state after a loop iteration.
  void Publish(const StatsReply& stats);

  // The text exposition: rplasma_store_* families, `store_name` as rplasma_store_info's label.
  std::string Render(absl::string_view store_name) const;

 private:
  // Every plain metric renders itself, from two counter sets: the published state, then the
  // counted events. Render writes by hand only what a counter set cannot hold: objects by state
  // (two gauges in one labelled family), the fragmentation ratio (a double) and requests by kind
  // (one labelled sample per kind).

  // The last published StatsReply, field by field.
  CounterSet state_;
  Gauge capacity_{&state_, "capacity", "rplasma_store_capacity_bytes", "Arena size."};
  Gauge used_bytes_{&state_, "used_bytes", "rplasma_store_used_bytes", "Arena bytes allocated to objects."};
  Gauge objects_created_{&state_, "objects_created"};  // rplasma_store_objects{state="created"}
  Gauge objects_sealed_{&state_, "objects_sealed"};    // rplasma_store_objects{state="sealed"}
  Gauge ref_count_{&state_, "ref_count", "rplasma_store_references", "Object references held by clients, summed."};
  Gauge clients_{&state_, "clients", "rplasma_store_clients", "Connected clients."};
  Gauge subscribers_{&state_, "subscribers", "rplasma_store_subscribers", "Clients subscribed to object events."};
  Gauge waiting_gets_{&state_, "waiting_gets", "rplasma_store_waiting_gets",
                      "Get requests waiting for objects to be sealed."};
  Gauge indexed_objects_{&state_, "indexed_objects", "rplasma_store_indexed_objects",
                         "Sealed objects in the shared-memory index (gets with no IPC)."};
  Gauge reclaims_waiting_{&state_, "reclaims_waiting", "rplasma_store_reclaims_waiting",
                          "Deleted objects whose bytes wait for a slot reference to go."};
  Gauge free_blocks_{&state_, "free_blocks", "rplasma_store_free_blocks", "Free blocks in the arena allocator."};
  Gauge largest_free_block_{&state_, "largest_free_block", "rplasma_store_largest_free_block_bytes",
                            "The largest free block."};
  std::atomic<double> fragmentation_{0};
  // Counted by the loop, per request and per table event.
  std::array<std::atomic<uint64_t>, kRequestKinds> requests_{};
  CounterSet events_;
  Counter seals_{&events_, "seals", "rplasma_store_seals_total", "Objects sealed."};
  Counter sealed_bytes_{&events_, "sealed_bytes", "rplasma_store_sealed_bytes_total",
                        "Bytes (data + metadata) of the objects sealed."};
  Counter deletes_{&events_, "deletes", "rplasma_store_deletes_total", "Sealed objects deleted."};
  Counter evictions_{&events_, "evictions", "rplasma_store_evictions_total", "Objects evicted to make room."};
  Counter evicted_bytes_{&events_, "evicted_bytes", "rplasma_store_evicted_bytes_total",
                         "Bytes of the objects evicted."};
};

}  // namespace rplasma

#endif  // RPLASMA_STORE_STORE_METRICS_H_
