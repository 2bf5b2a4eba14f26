// StoreMetrics: what rplasma-store exposes to Prometheus (docs/METRICS.md), read without ever
// stopping the event loop.
//
// The loop owns the store's state (StoreServer), so it is the only writer here: it counts each
// request and each table event as it handles them, and after every loop iteration publishes the
// StatsReply it would answer a Stats request with. All of it lands in relaxed atomics; Render, on
// any thread (the /metrics server's, the textfile writer's), reads them. A rendering may mix two
// consecutive iterations' gauges, never a torn value.
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
  // One per EventKind (sealed, deleted, evicted).
  static constexpr size_t kEventKinds = 3;

  std::array<std::atomic<uint64_t>, kRequestKinds> requests_{};
  std::array<std::atomic<uint64_t>, kEventKinds> events_{};
  std::array<std::atomic<uint64_t>, kEventKinds> event_bytes_{};
  // The last published StatsReply, field by field.
  std::atomic<uint64_t> capacity_{0};
  std::atomic<uint64_t> used_bytes_{0};
  std::atomic<uint64_t> objects_created_{0};
  std::atomic<uint64_t> objects_sealed_{0};
  std::atomic<uint64_t> ref_count_{0};
  std::atomic<uint64_t> clients_{0};
  std::atomic<uint64_t> free_blocks_{0};
  std::atomic<uint64_t> largest_free_block_{0};
  std::atomic<double> fragmentation_{0};
  std::atomic<uint64_t> waiting_gets_{0};
  std::atomic<uint64_t> subscribers_{0};
  std::atomic<uint64_t> indexed_objects_{0};
  std::atomic<uint64_t> reclaims_waiting_{0};
};

}  // namespace rplasma

#endif  // RPLASMA_STORE_STORE_METRICS_H_
