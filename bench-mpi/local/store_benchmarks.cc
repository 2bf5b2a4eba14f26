#include "bench-mpi/local/store_benchmarks.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"

#include "bench-mpi/common/size_units.h"
#include "protocol/base/object_id.h"
#include "protocol/base/status.h"

namespace rplasma::bench {
namespace {

// Source bytes for writes, touched once up front so the timed copies never page-fault on them.
std::vector<uint8_t> SourceBytes(uint64_t size) {
  std::vector<uint8_t> bytes(size);
  for (uint64_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(i * 131 + 7);
  return bytes;
}

absl::Status PutObject(Client& client, const ObjectID& id, const std::vector<uint8_t>& bytes) {
  return client.Put(id, bytes);
}

// Adds a result; the row names say what was measured.
absl::Status Report(const StoreBenchContext& ctx, const std::string& benchmark, uint64_t size,
                    const LatencySummary& latency, std::map<std::string, double> metrics = {}) {
  BenchResult r = MakeResult(benchmark, "rplasma", "unix", "store", size, latency);
  r.metrics = std::move(metrics);
  return ctx.reporter->Add(std::move(r));
}

absl::Status WithSize(absl::Status status, absl::string_view what, uint64_t size) {
  if (status.ok()) return status;
  return MakeError(ErrorCodeOf(status), absl::StrFormat("%s of %s: %s", what, FormatByteSize(size), status.message()));
}

}  // namespace

absl::Status RunCreateWriteSeal(const StoreBenchContext& ctx, uint64_t size) {
  Client& client = *ctx.client;
  const std::vector<uint8_t> source = SourceBytes(size);
  LatencyRecorder total, create, write, seal, release;
  absl::Status status = RunLoop(ctx.limits, [&](bool timed) -> absl::Status {
    const ObjectID id = ObjectID::Random();
    const int64_t t0 = NowNs();
    ASSIGN_OR_RETURN(CreatedObject created, client.Create(id, size));
    const int64_t t1 = NowNs();
    std::memcpy(created.data.data(), source.data(), size);
    const int64_t t2 = NowNs();
    RETURN_IF_ERROR(client.Seal(id));
    const int64_t t3 = NowNs();
    RETURN_IF_ERROR(client.Release(id));
    const int64_t t4 = NowNs();
    if (timed) {
      total.Record(t4 - t0);
      create.Record(t1 - t0);
      write.Record(t2 - t1);
      seal.Record(t3 - t2);
      release.Record(t4 - t3);
    }
    return client.Delete({&id, 1});
  });
  RETURN_IF_ERROR(WithSize(status, "create_write_seal", size));
  return Report(ctx, "create_write_seal", size, total.Summarize(),
                {{"create_p50_us", create.Summarize().p50_us},
                 {"write_p50_us", write.Summarize().p50_us},
                 {"seal_p50_us", seal.Summarize().p50_us},
                 {"release_p50_us", release.Summarize().p50_us}});
}

absl::Status RunPut(const StoreBenchContext& ctx, uint64_t size) {
  Client& client = *ctx.client;
  const std::vector<uint8_t> source = SourceBytes(size);
  LatencyRecorder put;
  absl::Status status = RunLoop(ctx.limits, [&](bool timed) -> absl::Status {
    const ObjectID id = ObjectID::Random();
    const int64_t t0 = NowNs();
    RETURN_IF_ERROR(client.Put(id, source));
    const int64_t t1 = NowNs();
    if (timed) put.Record(t1 - t0);
    return client.Delete({&id, 1});
  });
  RETURN_IF_ERROR(WithSize(status, "put", size));
  return Report(ctx, "put", size, put.Summarize(), {{"inline", size <= kMaxInlinePutBytes ? 1.0 : 0.0}});
}

absl::Status RunGetRelease(const StoreBenchContext& ctx, uint64_t size) {
  Client& client = *ctx.client;
  const ObjectID id = ObjectID::Random();
  RETURN_IF_ERROR(WithSize(PutObject(client, id, SourceBytes(size)), "put", size));
  LatencyRecorder get, release, both;
  absl::Status status = RunLoop(ctx.limits, [&](bool timed) -> absl::Status {
    const int64_t t0 = NowNs();
    ASSIGN_OR_RETURN(ObjectBuffer buffer, client.GetOne(id));
    const int64_t t1 = NowNs();
    RETURN_IF_ERROR(buffer.Release());
    const int64_t t2 = NowNs();
    if (buffer.data().size() != size) {
      return MakeError(ErrorCode::kInternal, absl::StrFormat("get returned %d bytes", buffer.data().size()));
    }
    if (timed) {
      get.Record(t1 - t0);
      release.Record(t2 - t1);
      both.Record(t2 - t0);
    }
    return absl::OkStatus();
  });
  absl::Status cleanup = client.Delete({&id, 1});
  RETURN_IF_ERROR(WithSize(status, "get", size));
  RETURN_IF_ERROR(cleanup);
  RETURN_IF_ERROR(Report(ctx, "get", size, get.Summarize()));
  RETURN_IF_ERROR(Report(ctx, "release", size, release.Summarize()));
  return Report(ctx, "get_release", size, both.Summarize());
}

absl::Status RunBatchGet(const StoreBenchContext& ctx, uint64_t size) {
  Client& client = *ctx.client;
  const std::vector<uint8_t> source = SourceBytes(size);
  std::vector<ObjectID> ids;
  ids.reserve(ctx.batch);
  absl::Status status;
  for (int64_t i = 0; i < ctx.batch && status.ok(); ++i) {
    ids.push_back(ObjectID::Random());
    status = PutObject(client, ids.back(), source);
    if (!status.ok()) ids.pop_back();
  }
  LatencyRecorder get, release;
  if (status.ok()) {
    status = RunLoop(ctx.limits, [&](bool timed) -> absl::Status {
      const int64_t t0 = NowNs();
      ASSIGN_OR_RETURN(std::vector<ObjectBuffer> buffers, client.Get(ids));
      const int64_t t1 = NowNs();
      for (const ObjectBuffer& b : buffers) {
        if (!b.valid()) return WithSize(b.status(), "batch get entry", size);
      }
      buffers.clear();  // each ObjectBuffer releases its reference
      const int64_t t2 = NowNs();
      if (timed) {
        get.Record(t1 - t0);
        release.Record(t2 - t1);
      }
      return absl::OkStatus();
    });
  }
  absl::Status cleanup = client.Delete(ids);
  RETURN_IF_ERROR(WithSize(status, "batch_get", size));
  RETURN_IF_ERROR(cleanup);
  const double n = static_cast<double>(ctx.batch);
  RETURN_IF_ERROR(Report(ctx, "batch_get", size, get.Summarize().PerItem(ctx.batch),
                         {{"batch", n}, {"batch_p50_us", get.Summarize().p50_us}}));
  return Report(ctx, "batch_release", size, release.Summarize().PerItem(ctx.batch),
                {{"batch", n}, {"batch_p50_us", release.Summarize().p50_us}});
}

absl::Status RunCreateSealGet(const StoreBenchContext& ctx, uint64_t size) {
  Client& client = *ctx.client;
  const std::vector<uint8_t> source = SourceBytes(size);
  LatencyRecorder cycle;
  absl::Status status = RunLoop(ctx.limits, [&](bool timed) -> absl::Status {
    const ObjectID id = ObjectID::Random();
    const int64_t t0 = NowNs();
    RETURN_IF_ERROR(PutObject(client, id, source));
    ASSIGN_OR_RETURN(ObjectBuffer buffer, client.GetOne(id));
    RETURN_IF_ERROR(buffer.Release());
    const int64_t t1 = NowNs();
    if (timed) cycle.Record(t1 - t0);
    return client.Delete({&id, 1});
  });
  RETURN_IF_ERROR(WithSize(status, "create_seal_get", size));
  return Report(ctx, "create_seal_get", size, cycle.Summarize());
}

}  // namespace rplasma::bench
