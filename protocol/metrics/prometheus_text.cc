#include "protocol/metrics/prometheus_text.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

#include "protocol/base/logging.h"

namespace rplasma {
namespace {

bool IsName(absl::string_view name, bool allow_colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    const bool ok =
        absl::ascii_isalpha(c) || c == '_' || (allow_colon && c == ':') || (i > 0 && absl::ascii_isdigit(c));
    if (!ok) return false;
  }
  return true;
}

const char* TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter: return "counter";
    case MetricType::kGauge: return "gauge";
    case MetricType::kHistogram: return "histogram";
  }
  return "untyped";
}

std::string Escape(absl::string_view text, bool quote) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '\\') {
      out.append("\\\\");
    } else if (c == '\n') {
      out.append("\\n");
    } else if (quote && c == '"') {
      out.append("\\\"");
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

std::string EscapeLabelValue(absl::string_view value) { return Escape(value, /*quote=*/true); }
std::string EscapeHelp(absl::string_view help) { return Escape(help, /*quote=*/false); }

std::string FormatMetricValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // The shortest of %.15g..%.17g that reads back as the same double.
  char buffer[32];
  for (int precision = 15; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  return buffer;
}

void PrometheusText::Family(absl::string_view name, MetricType type, absl::string_view help) {
  CHECK(IsName(name, /*allow_colon=*/true));
  absl::StrAppend(&text_, "# HELP ", name, " ", EscapeHelp(help), "\n# TYPE ", name, " ", TypeName(type), "\n");
}

void PrometheusText::AppendSeries(absl::string_view name, const MetricLabels& labels, absl::string_view extra_name,
                                  absl::string_view extra_value) {
  CHECK(IsName(name, /*allow_colon=*/true));
  text_.append(name.data(), name.size());
  if (labels.empty() && extra_name.empty()) return;
  text_.push_back('{');
  bool first = true;
  auto add = [&](absl::string_view label, absl::string_view value) {
    CHECK(IsName(label, /*allow_colon=*/false));
    absl::StrAppend(&text_, first ? "" : ",", label, "=\"", EscapeLabelValue(value), "\"");
    first = false;
  };
  for (const auto& [label, value] : labels) add(label, value);
  if (!extra_name.empty()) add(extra_name, extra_value);
  text_.push_back('}');
}

void PrometheusText::Sample(absl::string_view name, const MetricLabels& labels, uint64_t value) {
  AppendSeries(name, labels);
  absl::StrAppend(&text_, " ", value, "\n");
}

void PrometheusText::Sample(absl::string_view name, const MetricLabels& labels, double value) {
  AppendSeries(name, labels);
  absl::StrAppend(&text_, " ", FormatMetricValue(value), "\n");
}

void PrometheusText::Histogram(absl::string_view name, const MetricLabels& labels, const HistogramSnapshot& h) {
  const std::string bucket = absl::StrCat(name, "_bucket");
  for (size_t i = 0; i < h.bounds.size() && i < h.cumulative.size(); ++i) {
    AppendSeries(bucket, labels, "le", FormatMetricValue(h.bounds[i]));
    absl::StrAppend(&text_, " ", h.cumulative[i], "\n");
  }
  AppendSeries(bucket, labels, "le", "+Inf");
  absl::StrAppend(&text_, " ", h.count, "\n");
  Sample(absl::StrCat(name, "_sum"), labels, h.sum);
  Sample(absl::StrCat(name, "_count"), labels, h.count);
}

void PrometheusText::Single(absl::string_view name, MetricType type, absl::string_view help, uint64_t value) {
  Family(name, type, help);
  Sample(name, {}, value);
}

}  // namespace rplasma
