#include "bench-mpi/mpi/fetch_phase.h"

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

#include "bench-mpi/common/object_pattern.h"
#include "bench-mpi/mpi/lane_order.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"

namespace rplasma::bench {
namespace {

absl::Status PutObjects(Client& client, const std::vector<ObjectID>& ids, uint64_t size) {
  for (const ObjectID& id : ids) {
    ASSIGN_OR_RETURN(CreatedObject object, client.Create(id, size, {}, /*evict_if_full=*/false));
    FillPattern(id, object.data);
    RETURN_IF_ERROR(client.Seal(id));
    RETURN_IF_ERROR(client.Release(id));
  }
  return absl::OkStatus();
}

// One round's fetches in Fetch calls of `batch` consecutive ids (call j: ids j*B .. j*B+B-1);
// thread t makes calls t, t+C, t+2C, ... one at a time. One sample per call.
absl::Status FetchRound(const std::vector<std::unique_ptr<Client>>& clients, const FetchPlan& plan,
                        ForcedProtocol protocol, const FetchPhaseOptions& options, std::vector<int64_t>* samples_ns) {
  const size_t batch = static_cast<size_t>(std::max(options.batch, 1));
  const size_t calls = (plan.fetches.size() + batch - 1) / batch;
  const int threads = std::min<int>(options.concurrency, std::max<size_t>(calls, 1));
  absl::Mutex mu;
  absl::Status first_error;
  std::vector<std::vector<int64_t>> per_thread(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (size_t call = t; call < calls; call += threads) {
        const size_t first = call * batch;
        const size_t n = std::min(batch, plan.fetches.size() - first);
        const absl::Time start = absl::Now();
        absl::Status status = clients[t]->Fetch({&plan.fetches[first], n}, options.fetch_timeout, {}, protocol);
        per_thread[t].push_back(absl::ToInt64Nanoseconds(absl::Now() - start));
        if (!status.ok()) {
          rplasma::MutexLock lock(&mu);
          if (first_error.ok()) {
            first_error =
                MakeError(ErrorCodeOf(status), absl::StrCat("fetch of ", n == 1 ? "" : absl::StrCat(n, " ids from "),
                                                            plan.fetches[first].Hex(), " from rank ",
                                                            plan.fetch_owner[first], ": ", status.message()));
          }
          return;
        }
      }
    });
  }
  for (std::thread& w : workers) w.join();
  for (auto& v : per_thread) samples_ns->insert(samples_ns->end(), v.begin(), v.end());
  return first_error;
}

// Checks and deletes this round's local copies.
absl::Status VerifyAndDelete(Client& client, const FetchPlan& plan, bool verify, uint64_t* verified) {
  if (plan.fetches.empty()) return absl::OkStatus();
  if (verify) {
    for (const ObjectID& id : plan.fetches) {
      ASSIGN_OR_RETURN(ObjectBuffer buffer, client.GetOne(id, absl::Seconds(5)));
      RETURN_IF_ERROR(VerifyPattern(id, buffer.data()));
      *verified += buffer.data().size();
    }
  }
  return client.Delete(plan.fetches);
}

}  // namespace

absl::Status AgreeAcrossRanks(const MpiWorld& world, const absl::Status& status) {
  if (world.AllTrue(status.ok())) return absl::OkStatus();
  std::vector<std::string> messages = world.AllGather(status.ok() ? "" : status.ToString());
  for (int r = 0; r < world.size(); ++r) {
    if (!messages[r].empty()) return MakeError(ErrorCode::kUnavailable, absl::StrCat("rank ", r, ": ", messages[r]));
  }
  return MakeError(ErrorCode::kInternal, "a rank failed without a message");
}

LatencySummary RankPhaseResult::Summarize() const {
  LatencyRecorder recorder;
  recorder.Reserve(samples_ns.size());
  for (int64_t ns : samples_ns) recorder.Record(ns);
  return recorder.Summarize();
}

absl::Status RunFetchPhase(const MpiWorld& world, const std::vector<std::unique_ptr<Client>>& clients,
                           const FetchPlan& plan, const FetchPhaseOptions& options, RankPhaseResult* result) {
  std::vector<FetchLane> lanes(1);
  lanes[0].clients = &clients;
  lanes[0].plan = plan;
  std::vector<RankPhaseResult> results;
  absl::Status status = RunInterleavedFetchPhases(world, lanes, options, &results);
  *result = results.empty() ? RankPhaseResult() : std::move(results[0]);
  return status;
}

absl::Status RunInterleavedFetchPhases(const MpiWorld& world, const std::vector<FetchLane>& lanes,
                                       const FetchPhaseOptions& options, std::vector<RankPhaseResult>* results) {
  results->assign(lanes.size(), RankPhaseResult());
  absl::Status put;
  for (const FetchLane& lane : lanes) {
    if (put.ok()) put = PutObjects(*(*lane.clients)[0], lane.plan.puts, options.object_size);
  }
  absl::Status status = AgreeAcrossRanks(world, put);
  world.Barrier();
  // One batch of one lane: every rank runs the same (lane, round) sequence, so the barriers and
  // the AllTrue inside AgreeAcrossRanks line up.
  auto batch = [&](size_t l, bool measured) {
    const FetchLane& lane = lanes[l];
    RankPhaseResult& result = (*results)[l];
    world.Barrier();
    std::vector<int64_t> samples;
    const absl::Time start = absl::Now();
    absl::Status round_status = FetchRound(*lane.clients, lane.plan, lane.protocol, options, &samples);
    const absl::Duration wall = absl::Now() - start;
    if (round_status.ok()) {
      round_status = VerifyAndDelete(*(*lane.clients)[0], lane.plan, options.verify, &result.verified_bytes);
    }
    if (round_status.ok() && measured) {
      result.fetches += static_cast<int64_t>(lane.plan.fetches.size());
      result.bytes += lane.plan.fetches.size() * options.object_size;
      result.wall_s += absl::ToDoubleSeconds(wall);
      result.samples_ns.insert(result.samples_ns.end(), samples.begin(), samples.end());
      result.round_ns.push_back(lane.plan.fetches.empty() ? 0 : absl::ToInt64Nanoseconds(wall));
    }
    status = AgreeAcrossRanks(world, round_status);
  };
  const size_t n = lanes.size();
  // Warm-ups per lane (each lane's connections and caches), then the measured rounds interleaved.
  for (size_t l = 0; l < n && status.ok(); ++l) {
    for (int round = 0; round < options.warmup && status.ok(); ++round) batch(l, /*measured=*/false);
  }
  // Round r runs the lanes in InterleavedLaneOrders(n)[r mod its size].
  const std::vector<std::vector<size_t>> orders = InterleavedLaneOrders(n);
  for (int round = 0; round < options.repeat && status.ok(); ++round) {
    for (size_t l : orders[static_cast<size_t>(round) % orders.size()]) {
      if (status.ok()) batch(l, /*measured=*/true);
    }
  }
  // Owners drop their objects whatever happened, so the next phase starts with empty stores.
  world.Barrier();
  for (const FetchLane& lane : lanes) {
    Client& client = *(*lane.clients)[0];
    if (!lane.plan.puts.empty()) {
      absl::Status deleted = client.Delete(lane.plan.puts);
      if (status.ok()) status = deleted;
    }
    if (!lane.plan.fetches.empty() && !status.ok()) (void)client.Delete(lane.plan.fetches);
  }
  return AgreeAcrossRanks(world, status);
}

}  // namespace rplasma::bench
