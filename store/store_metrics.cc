#include "store/store_metrics.h"

#include <iterator>

#include "protocol/metrics/counter_set_text.h"
#include "protocol/metrics/prometheus_text.h"

namespace rplasma {
namespace {

// RequestBody's alternatives, in order: the `request` label of rplasma_store_requests_total.
constexpr const char* kRequestNames[] = {
    "connect", "create", "seal",      "abort", "get",          "release",    "contains",  "delete",        "evict",
    "list",    "stats",  "subscribe", "put",   "create_batch", "seal_batch", "put_batch", "slots_released"};
static_assert(std::size(kRequestNames) == StoreMetrics::kRequestKinds, "a request kind without a name");

}  // namespace

void StoreMetrics::CountEvent(EventKind kind, uint64_t bytes) {
  switch (kind) {
    case EventKind::kSealed:
      seals_.fetch_add(1);
      sealed_bytes_.fetch_add(bytes);
      return;
    case EventKind::kDeleted: deletes_.fetch_add(1); return;
    case EventKind::kEvicted:
      evictions_.fetch_add(1);
      evicted_bytes_.fetch_add(bytes);
      return;
  }
}

void StoreMetrics::Publish(const StatsReply& s) {
  // Every published value is far below 2^63 (bytes of one arena, counts of its objects).
  auto publish = [](Gauge& gauge, uint64_t value) { gauge.store(static_cast<int64_t>(value)); };
  publish(capacity_, s.capacity);
  publish(used_bytes_, s.used_bytes);
  publish(objects_created_, s.objects_created);
  publish(objects_sealed_, s.objects_sealed);
  publish(ref_count_, s.ref_count);
  publish(clients_, s.clients);
  publish(free_blocks_, s.free_blocks);
  publish(largest_free_block_, s.largest_free_block);
  fragmentation_.store(s.fragmentation, std::memory_order_relaxed);
  publish(waiting_gets_, s.waiting_gets);
  publish(subscribers_, s.subscribers);
  publish(indexed_objects_, s.indexed_objects);
  publish(reclaims_waiting_, s.reclaims_waiting);
}

std::string StoreMetrics::Render(absl::string_view store_name) const {
  const CounterSnapshot state = state_.Snapshot();
  PrometheusText t;
  t.Family("rplasma_store_info", MetricType::kGauge, "Always 1; the store's name as a label.");
  t.Sample("rplasma_store_info", {{"name", std::string(store_name)}}, uint64_t{1});
  AppendCounters(t, state);
  t.Family("rplasma_store_objects", MetricType::kGauge, "Objects in the store, by state.");
  t.Sample("rplasma_store_objects", {{"state", "sealed"}}, state["objects_sealed"]);
  t.Sample("rplasma_store_objects", {{"state", "created"}}, state["objects_created"]);
  t.Family("rplasma_store_fragmentation_ratio", MetricType::kGauge,
           "1 - largest free block / free bytes (0 when nothing is free).");
  t.Sample("rplasma_store_fragmentation_ratio", {}, fragmentation_.load(std::memory_order_relaxed));
  t.Family("rplasma_store_requests_total", MetricType::kCounter, "Requests handled, by kind (a batch counts once).");
  for (size_t i = 0; i < kRequestKinds; ++i) {
    t.Sample("rplasma_store_requests_total", {{"request", kRequestNames[i]}},
             requests_[i].load(std::memory_order_relaxed));
  }
  AppendCounters(t, events_.Snapshot());
  return t.str();
}

}  // namespace rplasma
