#include "protocol/metrics/prometheus_text.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "protocol/metrics/latency_histogram.h"

namespace rplasma {
namespace {

TEST(PrometheusTextTest, FamilyWritesHelpAndTypeThenSamples) {
  PrometheusText text;
  text.Family("rplasma_x_requests_total", MetricType::kCounter, "Requests handled.");
  text.Sample("rplasma_x_requests_total", {{"request", "get"}}, uint64_t{12});
  text.Sample("rplasma_x_requests_total", {{"request", "put"}, {"peer", "b"}}, uint64_t{3});
  text.Single("rplasma_x_clients", MetricType::kGauge, "Connected clients.", 2);
  EXPECT_EQ(text.str(),
            "# HELP rplasma_x_requests_total Requests handled.\n"
            "# TYPE rplasma_x_requests_total counter\n"
            "rplasma_x_requests_total{request=\"get\"} 12\n"
            "rplasma_x_requests_total{request=\"put\",peer=\"b\"} 3\n"
            "# HELP rplasma_x_clients Connected clients.\n"
            "# TYPE rplasma_x_clients gauge\n"
            "rplasma_x_clients 2\n");
}

TEST(PrometheusTextTest, LabelValuesAndHelpAreEscaped) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(EscapeHelp("say \"hi\"\\\n"), "say \"hi\"\\\\\\n");  // quotes stay in HELP
  PrometheusText text;
  text.Family("m", MetricType::kGauge, "line one\nline two");
  text.Sample("m", {{"peer", "evil\"} 1\nfake 2"}}, uint64_t{1});
  EXPECT_EQ(text.str(),
            "# HELP m line one\\nline two\n# TYPE m gauge\n"
            "m{peer=\"evil\\\"} 1\\nfake 2\"} 1\n");
}

TEST(PrometheusTextTest, DoublesRoundTripAndNonFiniteValuesUseTheFormatsSpelling) {
  EXPECT_EQ(FormatMetricValue(0.1), "0.1");
  EXPECT_EQ(FormatMetricValue(2.5e-05), "2.5e-05");
  EXPECT_EQ(FormatMetricValue(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(FormatMetricValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatMetricValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatMetricValue(std::nan("")), "NaN");
}

TEST(PrometheusTextTest, HistogramBucketsAreCumulativeEndWithInfAndCarrySumAndCount) {
  LatencyHistogram histogram({0.001, 0.01, 0.1});
  histogram.Observe(absl::Microseconds(500));  // <= 0.001
  histogram.Observe(absl::Milliseconds(1));    // == 0.001: "less or equal" puts it in the first bucket
  histogram.Observe(absl::Milliseconds(50));   // <= 0.1
  histogram.Observe(absl::Seconds(2));         // above every bound: +Inf only
  histogram.Observe(absl::Milliseconds(-5));   // a clock step backwards counts as 0
  const HistogramSnapshot s = histogram.Snapshot();
  EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{3, 3, 4}));
  EXPECT_EQ(s.count, 5u);
  EXPECT_NEAR(s.sum, 2.0515, 1e-9);
  PrometheusText text;
  text.Family("rplasma_x_fetch_seconds", MetricType::kHistogram, "Fetch latency.");
  text.Histogram("rplasma_x_fetch_seconds", {{"protocol", "get"}}, s);
  EXPECT_EQ(text.str(),
            "# HELP rplasma_x_fetch_seconds Fetch latency.\n"
            "# TYPE rplasma_x_fetch_seconds histogram\n"
            "rplasma_x_fetch_seconds_bucket{protocol=\"get\",le=\"0.001\"} 3\n"
            "rplasma_x_fetch_seconds_bucket{protocol=\"get\",le=\"0.01\"} 3\n"
            "rplasma_x_fetch_seconds_bucket{protocol=\"get\",le=\"0.1\"} 4\n"
            "rplasma_x_fetch_seconds_bucket{protocol=\"get\",le=\"+Inf\"} 5\n"
            "rplasma_x_fetch_seconds_sum{protocol=\"get\"} 2.0515\n"
            "rplasma_x_fetch_seconds_count{protocol=\"get\"} 5\n");
}

TEST(LatencyHistogramTest, FetchBoundsSpanTenMicrosecondsToTenSecondsIncreasing) {
  const std::vector<double> bounds = LatencyHistogram::FetchBounds();
  ASSERT_FALSE(bounds.empty());
  EXPECT_DOUBLE_EQ(bounds.front(), 1e-5);
  EXPECT_DOUBLE_EQ(bounds.back(), 10);
  for (size_t i = 1; i < bounds.size(); ++i) EXPECT_LT(bounds[i - 1], bounds[i]);
}

}  // namespace
}  // namespace rplasma
