// RunDirectoryBench: rplasma-bench --mode directory. The directory's capacity on a private
// redis-server and then on a private Redis Cluster (3 masters, --replicas 1 each: RedisCluster),
// one after the other in the same run, the first stopped before the second starts.
//
// --nodes threads each play one node: its own RedisDirectory, registered under its own node id.
// Each system runs three phases of --duration, all nodes at once:
//   directory_seal    PublishObjects of --batch fresh ids per call, as ObjectPublisher does;
//   directory_lookup  Lookup of 1 id, then (a second phase) of --batch ids, the ids drawn from
//                     what the other nodes sealed, as the fetch engine looks up its misses.
// Before each phase the masters' statistics are reset (CONFIG RESETSTAT); after it the bench reads
// INFO commandstats and DBSIZE of every master and the directories' counters.
//
// Rows (benchmark, system redis|redis_cluster, transport tcp, protocol resp): object_size is the
// ids per call (the directory moves no object bytes; gb_per_s is 0), ops_per_s the ids per second
// of all nodes together, the latencies those of one call. Detail: nodes, calls_per_s,
// commands_per_id (Redis commands on all masters ÷ ids), pipelines_per_call (the directories'
// `ops`: one per master a call involves, sent together), masters, commands_per_s_per_master and
// command_balance (max ÷ mean over masters), on seal rows keys_min, keys_max, key_balance (max ÷
// mean of DBSIZE over masters), on lookup rows found (share of ids found), and on cluster rows
// ratio_vs_redis (ops_per_s ÷ that of the same row on one redis-server). A summary follows.
// Judging the ratios is a reader's job. Everything started is stopped before it returns.
#ifndef RPLASMA_BENCH_MPI_LOCAL_DIRECTORY_BENCH_H_
#define RPLASMA_BENCH_MPI_LOCAL_DIRECTORY_BENCH_H_

#include <ostream>

#include "absl/status/status.h"

#include "bench-mpi/local/local_bench_options.h"

namespace rplasma::bench {

absl::Status RunDirectoryBench(const LocalBenchOptions& options, std::ostream& out);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_LOCAL_DIRECTORY_BENCH_H_
