#include "store/store_metrics.h"

#include <string>

#include "absl/strings/match.h"
#include <gtest/gtest.h>

namespace rplasma {
namespace {

TEST(StoreMetricsTest, RenderShowsCountedRequestsEventsAndThePublishedState) {
  StoreMetrics metrics;
  metrics.CountRequest(RequestBody(GetRequest{}).index());
  metrics.CountRequest(RequestBody(GetRequest{}).index());
  metrics.CountRequest(RequestBody(PutBatchRequest{}).index());
  metrics.CountRequest(StoreMetrics::kRequestKinds);  // out of range: ignored, not a crash
  metrics.CountEvent(EventKind::kSealed, 100);
  metrics.CountEvent(EventKind::kSealed, 28);
  metrics.CountEvent(EventKind::kEvicted, 64);
  StatsReply s;
  s.capacity = 1 << 20;
  s.used_bytes = 4096;
  s.objects_sealed = 2;
  s.objects_created = 1;
  s.clients = 3;
  s.fragmentation = 0.25;
  metrics.Publish(s);
  const std::string text = metrics.Render("my \"store\"");
  for (const char* line :
       {"rplasma_store_info{name=\"my \\\"store\\\"\"} 1\n", "rplasma_store_capacity_bytes 1048576\n",
        "rplasma_store_used_bytes 4096\n", "rplasma_store_objects{state=\"sealed\"} 2\n",
        "rplasma_store_objects{state=\"created\"} 1\n", "rplasma_store_clients 3\n",
        "rplasma_store_fragmentation_ratio 0.25\n", "rplasma_store_requests_total{request=\"get\"} 2\n",
        "rplasma_store_requests_total{request=\"put_batch\"} 1\n",
        "rplasma_store_requests_total{request=\"connect\"} 0\n", "rplasma_store_seals_total 2\n",
        "rplasma_store_sealed_bytes_total 128\n", "rplasma_store_evictions_total 1\n",
        "rplasma_store_evicted_bytes_total 64\n", "rplasma_store_deletes_total 0\n",
        "# TYPE rplasma_store_requests_total counter\n", "# TYPE rplasma_store_used_bytes gauge\n"}) {
    EXPECT_TRUE(absl::StrContains(text, line)) << line << " missing from\n" << text;
  }
}

}  // namespace
}  // namespace rplasma
