#include "bench-mpi/mpi/mpi_world.h"

#include <time.h>

#include <cstdlib>

#include <mpi.h>

namespace rplasma::bench {
namespace {

// Waits for `request` sleeping between tests instead of spinning: a rank waiting in a collective
// (an owner while its fetchers work) must leave the CPU to its store and manager, which matters
// whenever ranks share cores (oversubscribed runs, small nodes).
void QuietWait(MPI_Request* request) {
  int done = 0;
  MPI_Test(request, &done, MPI_STATUS_IGNORE);
  const timespec nap{0, 50 * 1000};  // 50 us
  while (!done) {
    nanosleep(&nap, nullptr);
    MPI_Test(request, &done, MPI_STATUS_IGNORE);
  }
}

}  // namespace

std::unique_ptr<MpiWorld> MpiWorld::Init(int* argc, char*** argv) {
  MPI_Init(argc, argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return std::unique_ptr<MpiWorld>(new MpiWorld(rank, size));
}

MpiWorld::~MpiWorld() { MPI_Finalize(); }

void MpiWorld::Barrier() const {
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  QuietWait(&request);
}

std::string MpiWorld::Broadcast(const std::string& value, int from) const {
  uint64_t length = value.size();
  MPI_Bcast(&length, 1, MPI_UINT64_T, from, MPI_COMM_WORLD);
  std::string out = rank_ == from ? value : std::string(length, '\0');
  if (length > 0) MPI_Bcast(out.data(), static_cast<int>(length), MPI_CHAR, from, MPI_COMM_WORLD);
  return out;
}

std::vector<std::string> MpiWorld::AllGather(const std::string& value) const {
  int length = static_cast<int>(value.size());
  std::vector<int> lengths(size_);
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> offsets(size_, 0);
  int total = 0;
  for (int r = 0; r < size_; ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string all(total, '\0');
  MPI_Allgatherv(value.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> out(size_);
  for (int r = 0; r < size_; ++r) out[r] = all.substr(offsets[r], lengths[r]);
  return out;
}

std::vector<int64_t> MpiWorld::GatherToRoot(const std::vector<int64_t>& values) const {
  int count = static_cast<int>(values.size());
  std::vector<int> counts(size_);
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(size_, 0);
  int total = 0;
  for (int r = 0; r < size_; ++r) {
    offsets[r] = total;
    total += counts[r];
  }
  std::vector<int64_t> all(rank_ == 0 ? total : 0);
  MPI_Gatherv(values.data(), count, MPI_INT64_T, all.data(), counts.data(), offsets.data(), MPI_INT64_T, 0,
              MPI_COMM_WORLD);
  return all;
}

double MpiWorld::MaxAll(double value) const {
  double out = 0;
  MPI_Request request;
  MPI_Iallreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &request);
  QuietWait(&request);
  return out;
}

double MpiWorld::SumAll(double value) const {
  double out = 0;
  MPI_Request request;
  MPI_Iallreduce(&value, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &request);
  QuietWait(&request);
  return out;
}

bool MpiWorld::AllTrue(bool value) const {
  int in = value ? 1 : 0, out = 0;
  MPI_Request request;
  MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &request);
  QuietWait(&request);
  return out == 1;
}

void MpiWorld::Abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();
}

}  // namespace rplasma::bench
