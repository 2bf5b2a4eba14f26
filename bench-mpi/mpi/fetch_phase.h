// RunFetchPhase: one measured phase on every rank — owners put their objects, then in each round
// every fetcher brings its objects over with `concurrency` threads (each with its own Client, one
// Fetch call of up to `batch` ids in flight per thread), the round's Fetch calls are timed, then
// every fetched byte is verified (unless disabled) and the local copies deleted so the next round
// moves bytes again.
//
// RunInterleavedFetchPhases does the same for several lanes at once (one lane per protocol, each
// with its own objects, the protocol forced per fetch or chosen by the lane's node). Every lane
// gets its warm-up rounds first; then measured round k runs one batch of every lane, starting
// with lane k mod n (lane order rotates so that none is always first, and reverses every n rounds
// so that none always follows the same other lane). So every lane sees the same machine
// conditions, give or take one batch, and a drift in machine speed shows up in all of them alike.
//
// Collective: every rank calls it with the same arguments except its own plan, in the same order.
// Any rank's failure ends the phase on every rank (an AllTrue after each round), with the failing
// rank's message. Thread-safety: main thread only (fetch threads never touch MPI).
#ifndef RPLASMA_BENCH_MPI_MPI_FETCH_PHASE_H_
#define RPLASMA_BENCH_MPI_MPI_FETCH_PHASE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

#include "bench-mpi/common/latency_recorder.h"
#include "bench-mpi/mpi/fetch_plan.h"
#include "bench-mpi/mpi/mpi_world.h"
#include "client/client.h"

namespace rplasma::bench {

struct FetchPhaseOptions {
  uint64_t object_size = 0;
  int concurrency = 1;  // threads; REQUIRES: clients.size() >= concurrency
  int batch = 1;        // ids per Client::Fetch call (the last call of a thread may have fewer)
  int warmup = 0;
  int repeat = 1;
  bool verify = true;
  absl::Duration fetch_timeout = absl::Seconds(60);
};

// This rank's measurements of one phase.
struct RankPhaseResult {
  int64_t fetches = 0;              // measured objects fetched
  uint64_t bytes = 0;               // measured bytes
  double wall_s = 0;                // summed wall time of the measured rounds (fetches only)
  uint64_t verified_bytes = 0;      // every round, warm-up included
  std::vector<int64_t> samples_ns;  // one per measured Fetch call (of up to `batch` ids)
  // One per measured round, in round order: the round's fetch wall time on this rank, 0 when this
  // rank fetches nothing. Entry k of every lane is the same round (auto_ratio.h pairs them).
  std::vector<int64_t> round_ns;

  LatencySummary Summarize() const;
};

// Collective: OK on every rank only if `status` is OK on every rank; else the first failing
// rank's message, on every rank.
absl::Status AgreeAcrossRanks(const MpiWorld& world, const absl::Status& status);

absl::Status RunFetchPhase(const MpiWorld& world, const std::vector<std::unique_ptr<Client>>& clients,
                           const FetchPlan& plan, const FetchPhaseOptions& options, RankPhaseResult* result);

// One lane of an interleaved run: the clients it fetches through, the protocol its fetches force
// (kNone: the manager's choice), and the lane's plan (its own object ids). Lanes may share
// clients. REQUIRES: clients outlive the call.
struct FetchLane {
  const std::vector<std::unique_ptr<Client>>* clients = nullptr;
  FetchPlan plan;
  ForcedProtocol protocol = ForcedProtocol::kNone;
};

// Collective. `results` gets one RankPhaseResult per lane, in lane order.
absl::Status RunInterleavedFetchPhases(const MpiWorld& world, const std::vector<FetchLane>& lanes,
                                       const FetchPhaseOptions& options, std::vector<RankPhaseResult>* results);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_MPI_FETCH_PHASE_H_
