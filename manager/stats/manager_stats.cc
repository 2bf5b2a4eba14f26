#include "manager/stats/manager_stats.h"

#include "protocol/base/mutex_lock.h"

namespace rplasma::manager {
namespace {

// Mean phases over `n` fetches, in microseconds.
JsonObject PhasesJson(const FetchPhases& p, uint64_t n) {
  const double div = n == 0 ? 1.0 : static_cast<double>(n);
  auto us = [div](absl::Duration d) { return absl::ToDoubleMicroseconds(d) / div; };
  return JsonObject()
      .Decimal("lookup_us", us(p.lookup), 1)
      .Decimal("connect_us", us(p.connect), 1)
      .Decimal("transfer_us", us(p.transfer), 1)
      .Decimal("verify_us", us(p.verify), 1)
      .Decimal("seal_us", us(p.seal), 1);
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
  const FetchPhases& p = record.phases;
  latency_[Index(record.protocol)].Observe(p.lookup + p.connect + p.transfer + p.verify + p.seal);
  MutexLock lock(&mu_);
  ProtocolTotals& t = totals_[Index(record.protocol)];
  ++t.fetches;
  t.objects += record.objects;
  if (record.forced) t.forced_objects += record.objects;
  t.bytes += record.bytes;
  Add(t.phases, record.phases);
  recent_.push_back(record);
  if (recent_.size() > kRecentFetches) recent_.pop_front();
}

ManagerStats::ProtocolSnapshot ManagerStats::ByProtocol(peer::PeerProtocol protocol) const {
  ProtocolSnapshot s;
  s.latency = latency_[Index(protocol)].Snapshot();
  MutexLock lock(&mu_);
  const ProtocolTotals& t = totals_[Index(protocol)];
  s.transfers = t.fetches;
  s.objects = t.objects;
  s.forced_objects = t.forced_objects;
  s.bytes = t.bytes;
  s.phases = t.phases;
  return s;
}

std::string ManagerStats::ToJson(const JsonObject& extra) const {
  JsonObject out = Snapshot().ToJson();
  {
    MutexLock lock(&mu_);
    uint64_t fetches = 0;
    uint64_t bytes = 0;
    JsonObject by_protocol;
    for (int p = 0; p < 2; ++p) {
      const ProtocolTotals& t = totals_[p];
      fetches += t.fetches;
      bytes += t.bytes;
      by_protocol.Object(p == 0 ? "get" : "pin", JsonObject()
                                                     .Number("fetches", t.fetches)
                                                     .Number("objects", t.objects)
                                                     .Number("forced_objects", t.forced_objects)
                                                     .Number("bytes", t.bytes)
                                                     .Object("mean_phases", PhasesJson(t.phases, t.fetches)));
    }
    JsonArray recent;
    for (const FetchRecord& r : recent_) {
      recent.Object(JsonObject()
                        .String("id", r.id.Hex())
                        .String("peer", r.peer)
                        .String("protocol", peer::PeerProtocolName(r.protocol))
                        .String("why", r.why)
                        .Number("objects", r.objects)
                        .Number("bytes", r.bytes)
                        .Object("phases", PhasesJson(r.phases, 1)));
    }
    out.Number("fetches", fetches).Number("fetch_bytes", bytes).Object("by_protocol", by_protocol);
    out.Array("recent_fetches", recent);
  }
  out.Members(extra);
  return out.str();
}

}  // namespace rplasma::manager
