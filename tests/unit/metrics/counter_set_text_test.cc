#include "protocol/metrics/counter_set_text.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace rplasma {
namespace {

// One member of each kind with a metric, and one without.
struct ExampleCounters : CounterSet {
  explicit ExampleCounters(const uint64_t* table_size)
      : rows{this,
             "rows",
             MetricType::kGauge,
             "rplasma_test_rows",
             "Rows in the table.",
             [table_size] {
               return *table_size; }} {}
  Counter requests{this, "requests", "rplasma_test_requests_total", "Requests handled."};
  Counter retries{this, "retries"};  // JSON only
  Gauge open{this, "open", "rplasma_test_open_connections", "Open connections,\nnow."};
  Reading rows;
};

TEST(CounterSetTextTest, EveryMemberWithAMetricRendersItselfInDeclarationOrder) {
  uint64_t table_size = 7;
  ExampleCounters c(&table_size);
  c.requests.fetch_add(3);
  c.retries.fetch_add(5);
  c.open.fetch_add(2);
  PrometheusText text;
  AppendCounters(text, c.Snapshot());
  EXPECT_EQ(text.str(),
            "# HELP rplasma_test_requests_total Requests handled.\n"
            "# TYPE rplasma_test_requests_total counter\n"
            "rplasma_test_requests_total 3\n"
            "# HELP rplasma_test_open_connections Open connections,\\nnow.\n"
            "# TYPE rplasma_test_open_connections gauge\n"
            "rplasma_test_open_connections 2\n"
            "# HELP rplasma_test_rows Rows in the table.\n"
            "# TYPE rplasma_test_rows gauge\n"
            "rplasma_test_rows 7\n");
}

TEST(CounterSetTextTest, LabelsGoOnEverySample) {
  uint64_t table_size = 0;
  ExampleCounters c(&table_size);
  c.requests.fetch_add(1);
  PrometheusText text;
  AppendCounters(text, c.Snapshot(), {{"transport", "tcp"}, {"peer", "a\"b"}});
  EXPECT_EQ(text.str(),
            "# HELP rplasma_test_requests_total Requests handled.\n"
            "# TYPE rplasma_test_requests_total counter\n"
            "rplasma_test_requests_total{transport=\"tcp\",peer=\"a\\\"b\"} 1\n"
            "# HELP rplasma_test_open_connections Open connections,\\nnow.\n"
            "# TYPE rplasma_test_open_connections gauge\n"
            "rplasma_test_open_connections{transport=\"tcp\",peer=\"a\\\"b\"} 0\n"
            "# HELP rplasma_test_rows Rows in the table.\n"
            "# TYPE rplasma_test_rows gauge\n"
            "rplasma_test_rows{transport=\"tcp\",peer=\"a\\\"b\"} 0\n");
}

TEST(CounterSetTextTest, TheJsonStillListsEveryMember) {
  uint64_t table_size = 4;
  ExampleCounters c(&table_size);
  c.retries.fetch_add(5);
  EXPECT_EQ(c.Snapshot().ToJson().str(), R"({"requests":0,"retries":5,"open":0,"rows":4})");
}

TEST(CounterSetTextTest, ASnapshotKeepsItsMetricsAfterAValueIsReplaced) {
  uint64_t table_size = 0;
  ExampleCounters c(&table_size);
  CounterSnapshot s = c.Snapshot();
  s.Set("requests", 11);
  const CounterSnapshot::Entry& e = s.entries().front();
  EXPECT_EQ(e.metric, "rplasma_test_requests_total");
  EXPECT_EQ(e.type, MetricType::kCounter);
  EXPECT_EQ(e.value, 11u);
}

TEST(CounterSetTextTest, ASetWithoutMetricsRendersNothing) {
  struct JsonOnly : CounterSet {
    Counter a{this, "a"};
    Gauge b{this, "b"};
  } c;
  c.a.fetch_add(1);
  PrometheusText text;
  AppendCounters(text, c.Snapshot());
  EXPECT_EQ(text.str(), "");
}

}  // namespace
}  // namespace rplasma
