// RunScrapeBench: rplasma-bench --mode scrape. What Prometheus scraping costs a fetch: the two
// loopback nodes of --mode fetch (fetch_bench.h), each store and manager serving GET /metrics,
// and by size the p50 of Client::Fetch on node B measured in rounds; each round has a half with
// no scraper and a half with a thread that scrapes all four endpoints every --scrape-interval
// (100 ms), the halves' order alternating between rounds so drift hits both alike.
//
// Rows: benchmark "fetch" with protocol get/pin and detail "scraped=0|1;round=R" (CSV). The
// summary per size: the median over rounds of each half's p50, their ratio, the median of the
// per-round ratios, and the scrapes made. Judging the ratio (the goal: under 1.03) is a script's
// or a reader's job. Everything started is stopped before it returns.
#ifndef RPLASMA_BENCH_MPI_LOCAL_SCRAPE_BENCH_H_
#define RPLASMA_BENCH_MPI_LOCAL_SCRAPE_BENCH_H_

#include <ostream>

#include "absl/status/status.h"

#include "bench-mpi/local/local_bench_options.h"

namespace rplasma::bench {

absl::Status RunScrapeBench(const LocalBenchOptions& options, std::ostream& out);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_LOCAL_SCRAPE_BENCH_H_
