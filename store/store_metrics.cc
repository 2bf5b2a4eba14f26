#include "store/store_metrics.h"

#include <iterator>

#include "protocol/metrics/prometheus_text.h"

namespace rplasma {
namespace {

// RequestBody's alternatives, in order: the `request` label of rplasma_store_requests_total.
constexpr const char* kRequestNames[] = {
    "connect", "create", "seal",      "abort", "get",          "release",    "contains",  "delete",        "evict",
    "list",    "stats",  "subscribe", "put",   "create_batch", "seal_batch", "put_batch", "slots_released"};
static_assert(std::size(kRequestNames) == StoreMetrics::kRequestKinds, "a request kind without a name");

uint64_t Load(const std::atomic<uint64_t>& value) { return value.load(std::memory_order_relaxed); }

}  // namespace

void StoreMetrics::CountEvent(EventKind kind, uint64_t bytes) {
  const size_t i = static_cast<size_t>(kind);
  if (i >= kEventKinds) return;
  events_[i].fetch_add(1, std::memory_order_relaxed);
  event_bytes_[i].fetch_add(bytes, std::memory_order_relaxed);
}

void StoreMetrics::Publish(const StatsReply& s) {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  capacity_.store(s.capacity, kRelaxed);
  used_bytes_.store(s.used_bytes, kRelaxed);
  objects_created_.store(s.objects_created, kRelaxed);
  objects_sealed_.store(s.objects_sealed, kRelaxed);
  ref_count_.store(s.ref_count, kRelaxed);
  clients_.store(s.clients, kRelaxed);
  free_blocks_.store(s.free_blocks, kRelaxed);
  largest_free_block_.store(s.largest_free_block, kRelaxed);
  fragmentation_.store(s.fragmentation, kRelaxed);
  waiting_gets_.store(s.waiting_gets, kRelaxed);
  subscribers_.store(s.subscribers, kRelaxed);
  indexed_objects_.store(s.indexed_objects, kRelaxed);
  reclaims_waiting_.store(s.reclaims_waiting, kRelaxed);
}

std::string StoreMetrics::Render(absl::string_view store_name) const {
  PrometheusText t;
  t.Family("rplasma_store_info", MetricType::kGauge, "Always 1; the store's name as a label.");
  t.Sample("rplasma_store_info", {{"name", std::string(store_name)}}, uint64_t{1});
  t.Single("rplasma_store_capacity_bytes", MetricType::kGauge, "Arena size.", Load(capacity_));
  t.Single("rplasma_store_used_bytes", MetricType::kGauge, "Arena bytes allocated to objects.", Load(used_bytes_));
  t.Family("rplasma_store_objects", MetricType::kGauge, "Objects in the store, by state.");
  t.Sample("rplasma_store_objects", {{"state", "sealed"}}, Load(objects_sealed_));
  t.Sample("rplasma_store_objects", {{"state", "created"}}, Load(objects_created_));
  t.Single("rplasma_store_references", MetricType::kGauge, "Object references held by clients, summed.",
           Load(ref_count_));
  t.Single("rplasma_store_clients", MetricType::kGauge, "Connected clients.", Load(clients_));
  t.Single("rplasma_store_subscribers", MetricType::kGauge, "Clients subscribed to object events.", Load(subscribers_));
  t.Single("rplasma_store_waiting_gets", MetricType::kGauge, "Get requests waiting for objects to be sealed.",
           Load(waiting_gets_));
  t.Single("rplasma_store_indexed_objects", MetricType::kGauge,
           "Sealed objects in the shared-memory index (gets with no IPC).", Load(indexed_objects_));
  t.Single("rplasma_store_reclaims_waiting", MetricType::kGauge,
           "Deleted objects whose bytes wait for a slot reference to go.", Load(reclaims_waiting_));
  t.Single("rplasma_store_free_blocks", MetricType::kGauge, "Free blocks in the arena allocator.", Load(free_blocks_));
  t.Single("rplasma_store_largest_free_block_bytes", MetricType::kGauge, "The largest free block.",
           Load(largest_free_block_));
  t.Family("rplasma_store_fragmentation_ratio", MetricType::kGauge,
           "1 - largest free block / free bytes (0 when nothing is free).");
  t.Sample("rplasma_store_fragmentation_ratio", {}, fragmentation_.load(std::memory_order_relaxed));

  t.Family("rplasma_store_requests_total", MetricType::kCounter, "Requests handled, by kind (a batch counts once).");
  for (size_t i = 0; i < kRequestKinds; ++i) {
    t.Sample("rplasma_store_requests_total", {{"request", kRequestNames[i]}}, Load(requests_[i]));
  }
  const size_t sealed = static_cast<size_t>(EventKind::kSealed);
  const size_t deleted = static_cast<size_t>(EventKind::kDeleted);
  const size_t evicted = static_cast<size_t>(EventKind::kEvicted);
  t.Single("rplasma_store_seals_total", MetricType::kCounter, "Objects sealed.", Load(events_[sealed]));
  t.Single("rplasma_store_sealed_bytes_total", MetricType::kCounter, "Bytes (data + metadata) of the objects sealed.",
           Load(event_bytes_[sealed]));
  t.Single("rplasma_store_deletes_total", MetricType::kCounter, "Sealed objects deleted.", Load(events_[deleted]));
  t.Single("rplasma_store_evictions_total", MetricType::kCounter, "Objects evicted to make room.",
           Load(events_[evicted]));
  t.Single("rplasma_store_evicted_bytes_total", MetricType::kCounter, "Bytes of the objects evicted.",
           Load(event_bytes_[evicted]));
  return t.str();
}

}  // namespace rplasma
