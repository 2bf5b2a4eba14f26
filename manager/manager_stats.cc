#include "protocol/base/mutex_lock.h"
#include "manager/manager_stats.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace rplasma::manager {
namespace {

double Us(absl::Duration d) { return absl::ToDoubleMicroseconds(d); }

std::string PhasesJson(const FetchPhases& p, uint64_t n) {
  const double div = n == 0 ? 1.0 : static_cast<double>(n);
  return absl::StrFormat(R"({"lookup_us":%.1f,"connect_us":%.1f,"transfer_us":%.1f,"verify_us":%.1f,"seal_us":%.1f})",
                         Us(p.lookup) / div, Us(p.connect) / div, Us(p.transfer) / div, Us(p.verify) / div,
                         Us(p.seal) / div);
}

void Add(FetchPhases& into, const FetchPhases& p) {
  into.lookup += p.lookup;
  into.connect += p.connect;
  into.transfer += p.transfer;
  into.verify += p.verify;
  into.seal += p.seal;
}

}  // namespace

void ManagerStats::RecordFetch(const FetchRecord& record) {
  MutexLock lock(&mu_);
  ProtocolTotals& t = totals_[record.protocol == peer::PeerProtocol::kGet ? 0 : 1];
  ++t.fetches;
  t.bytes += record.bytes;
  Add(t.phases, record.phases);
  recent_.push_back(record);
  if (recent_.size() > kRecentFetches) recent_.pop_front();
}

std::string ManagerStats::ToJson(const std::map<std::string, std::string>& extra) const {
  std::string out = "{";
  auto counter = [&](absl::string_view name, const std::atomic<uint64_t>& value) {
    absl::StrAppend(&out, "\"", name, "\":", value.load(std::memory_order_relaxed), ",");
  };
  counter("fetch_requests", fetch_requests);
  counter("fetch_local", fetch_local);
  counter("fetch_merged", fetch_merged);
  counter("fetch_failures", fetch_failures);
  counter("transfer_failures", transfer_failures);
  counter("checksum_mismatches", checksum_mismatches);
  counter("lease_lapses", lease_lapses);
  counter("generation_hint_mismatches", generation_hint_mismatches);
  counter("directory_polls", directory_polls);
  counter("directory_errors", directory_errors);
  counter("objects_published", objects_published);
  counter("objects_removed", objects_removed);
  counter("publish_errors", publish_errors);
  counter("republishes", republishes);
  counter("heartbeat_errors", heartbeat_errors);
  counter("transport_fallbacks", transport_fallbacks);
  counter("calibrations", calibrations);
  {
    MutexLock lock(&mu_);
    uint64_t fetches = 0;
    uint64_t bytes = 0;
    for (int p = 0; p < 2; ++p) {
      fetches += totals_[p].fetches;
      bytes += totals_[p].bytes;
    }
    absl::StrAppend(&out, "\"fetches\":", fetches, ",\"fetch_bytes\":", bytes, ",\"by_protocol\":{");
    for (int p = 0; p < 2; ++p) {
      const ProtocolTotals& t = totals_[p];
      absl::StrAppend(&out, p == 0 ? "" : ",", "\"", p == 0 ? "get" : "pin", "\":{\"fetches\":", t.fetches,
                      ",\"bytes\":", t.bytes, ",\"mean_phases\":", PhasesJson(t.phases, t.fetches), "}");
    }
    absl::StrAppend(&out, "},\"recent_fetches\":[");
    bool first = true;
    for (const FetchRecord& r : recent_) {
      absl::StrAppend(&out, first ? "" : ",", "{\"id\":\"", r.id.Hex(), "\",\"peer\":\"", r.peer,
                      "\",\"protocol\":\"", peer::PeerProtocolName(r.protocol), "\",\"bytes\":", r.bytes,
                      ",\"phases\":", PhasesJson(r.phases, 1), "}");
      first = false;
    }
    absl::StrAppend(&out, "]");
  }
  for (const auto& [name, value] : extra) absl::StrAppend(&out, ",\"", name, "\":", value);
  absl::StrAppend(&out, "}");
  return out;
}

}  // namespace rplasma::manager
