#include "bench-mpi/mpi/fetch_plan.h"

#include "absl/strings/str_cat.h"

namespace rplasma::bench {
namespace {

ObjectID Id(const std::string& phase, int owner, int fetcher, int slot) {
  return ObjectID::FromLabel(absl::StrCat(phase, "/", owner, "/", fetcher, "/", slot));
}

// Adds what `rank` does when `owner` puts `objects` objects meant for `fetcher` (fetcher -1 = anyone).
void AddTransfer(FetchPlan& plan, int rank, int owner, int fetcher, int objects, const std::string& phase, bool fetch) {
  for (int slot = 0; slot < objects; ++slot) {
    const ObjectID id = Id(phase, owner, fetcher, slot);
    if (rank == owner) plan.puts.push_back(id);
    if (fetch) {
      plan.fetches.push_back(id);
      plan.fetch_owner.push_back(owner);
    }
  }
}

}  // namespace

FetchPlan MakeFetchPlan(FetchPattern pattern, int ranks, int rank, int objects, const std::string& phase) {
  FetchPlan plan;
  switch (pattern) {
    case FetchPattern::kPairs:
      for (int owner = 0; owner + 1 < ranks; owner += 2) {
        AddTransfer(plan, rank, owner, owner + 1, objects, phase, rank == owner + 1);
      }
      break;
    case FetchPattern::kBroadcast: AddTransfer(plan, rank, 0, -1, objects, phase, rank != 0); break;
    case FetchPattern::kGather:
      for (int owner = 1; owner < ranks; ++owner) AddTransfer(plan, rank, owner, 0, objects, phase, rank == 0);
      break;
    case FetchPattern::kAllToAll:
      for (int owner = 0; owner < ranks; ++owner) {
        for (int fetcher = 0; fetcher < ranks; ++fetcher) {
          if (owner == fetcher) continue;
          AddTransfer(plan, rank, owner, fetcher, objects, phase, rank == fetcher);
        }
      }
      break;
  }
  return plan;
}

FetchPlan MakeShiftPlan(int shift, int ranks, int rank, int objects, const std::string& phase) {
  FetchPlan plan;
  for (int fetcher = 0; fetcher < ranks; ++fetcher) {
    const int owner = (fetcher + shift) % ranks;
    AddTransfer(plan, rank, owner, fetcher, objects, phase, rank == fetcher);
  }
  return plan;
}

}  // namespace rplasma::bench
