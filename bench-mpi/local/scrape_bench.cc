#include "bench-mpi/local/scrape_bench.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "bench-mpi/common/latency_recorder.h"
#include "bench-mpi/common/measure_loop.h"
#include "bench-mpi/common/median.h"
#include "bench-mpi/common/result_reporter.h"
#include "bench-mpi/common/size_units.h"
#include "bench-mpi/launch/child_process.h"
#include "bench-mpi/launch/loopback_http.h"
#include "bench-mpi/local/fetch_bench.h"
#include "protocol/base/notification.h"
#include "protocol/base/object_id.h"
#include "protocol/base/status.h"

namespace rplasma::bench {
namespace {

constexpr uint64_t kScrapePoolBytes = 256u << 20;  // objects of one size put on A per half, at most
constexpr int64_t kWarmup = 5;                     // untimed fetches at the start of each half

// One GET /metrics on 127.0.0.1:port; the bytes of the reply (0 on failure).
uint64_t Scrape(uint16_t port) {
  absl::StatusOr<std::string> reply = LoopbackHttpExchange(port, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n");
  return reply.ok() && absl::StartsWith(*reply, "HTTP/1.1 200") ? reply->size() : 0;
}

// Scrapes every port every `interval` until destroyed, as Prometheus would.
class Scraper {
 public:
  Scraper(std::vector<uint16_t> ports, absl::Duration interval)
      : ports_(std::move(ports)), interval_(interval), thread_([this] { Loop(); }) {}
  ~Scraper() {
    stop_.Notify();
    thread_.join();
  }
  int64_t scrapes() const { return scrapes_.load(); }
  int64_t failures() const { return failures_.load(); }

 private:
  void Loop() {
    do {
      for (uint16_t port : ports_) (Scrape(port) > 0 ? scrapes_ : failures_).fetch_add(1);
    } while (!stop_.WaitForNotificationWithTimeout(interval_));
  }
  const std::vector<uint16_t> ports_;
  const absl::Duration interval_;
  std::atomic<int64_t> scrapes_{0};
  std::atomic<int64_t> failures_{0};
  Notification stop_;
  std::thread thread_;  // last: starts once the rest exists
};

// One half of a round: objects of `size` put on A, fetched one by one into B (each checked and
// deleted on B), while a Scraper runs or not (on its own thread). The timed fetches' summary.
absl::StatusOr<LatencySummary> RunHalf(const LocalBenchOptions& options, FetchNode& a, FetchNode& b, uint64_t size,
                                       int64_t* retries) {
  const std::vector<uint8_t> bytes(size, 0x5a);
  const int64_t pool_size =
      std::clamp<int64_t>(static_cast<int64_t>(kScrapePoolBytes / size), 1, options.iterations) + kWarmup;
  std::vector<ObjectID> pool;
  for (int64_t i = 0; i < pool_size; ++i) {
    pool.push_back(ObjectID::Random());
    RETURN_IF_ERROR(a.client->Put(pool.back(), bytes));
  }
  LatencyRecorder fetch;
  const absl::Time end = absl::Now() + options.duration;
  absl::Status status;
  for (int64_t i = 0; i < pool_size && status.ok(); ++i) {
    if (i >= kWarmup + LocalBenchOptions::kMinIterations && absl::Now() > end) break;
    absl::StatusOr<int64_t> ns = FetchOnce(*b.client, pool[i], retries);
    if (!ns.ok()) {
      status = ns.status();
      break;
    }
    absl::StatusOr<ObjectBuffer> got = b.client->GetOne(pool[i]);
    if (!got.ok() || got->data().size() != size || got->data()[size - 1] != 0x5a) {
      status = got.ok() ? MakeError(ErrorCode::kInternal, "fetched object differs") : got.status();
      break;
    }
    got = ObjectBuffer();
    if (i >= kWarmup) fetch.Record(*ns);
    status = b.client->Delete({&pool[i], 1});
  }
  absl::Status cleanup = a.client->Delete(pool);
  RETURN_IF_ERROR(status);
  RETURN_IF_ERROR(cleanup);
  return fetch.Summarize();
}

}  // namespace

absl::Status RunScrapeBench(const LocalBenchOptions& options, std::ostream& out) {
  RETURN_IF_ERROR(options.Validate());
  const uint64_t largest = *std::max_element(options.sizes.begin(), options.sizes.end());
  const uint64_t memory_a = std::max<uint64_t>(kScrapePoolBytes, largest) * 2 + (64u << 20);
  const uint64_t memory_b = 4 * largest + (64u << 20);

  ASSIGN_OR_RETURN(ScratchDir dir, ScratchDir::Create("rplasma-bench-scrape"));
  const std::string secret_file = dir.Join("secret");
  RETURN_IF_ERROR(WriteRandomSecret(secret_file));
  ASSIGN_OR_RETURN(std::unique_ptr<RedisServer> redis, RedisServer::Start(RedisServerOptions{}));
  std::vector<uint16_t> ports;
  for (int i = 0; i < 4; ++i) {
    ASSIGN_OR_RETURN(uint16_t port, UnusedLoopbackPort());
    ports.push_back(port);
  }
  auto metrics = [&](int i) { return std::vector<std::string>{absl::StrCat("--metrics-port=", ports[i])}; };
  ASSIGN_OR_RETURN(FetchNode a, StartFetchNode("a", memory_a, *redis, secret_file, options, metrics(0), metrics(1)));
  ASSIGN_OR_RETURN(FetchNode b, StartFetchNode("b", memory_b, *redis, secret_file, options, metrics(2), metrics(3)));
  for (uint16_t port : ports) {
    if (Scrape(port) == 0) return MakeError(ErrorCode::kUnavailable, absl::StrCat("no /metrics on port ", port));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<ResultReporter> reporter, ResultReporter::Create(options.csv_path, &out));
  out << absl::StrFormat(
      "fetch over %s (pin-threshold %s), %d rounds; each round one half without and one with a scraper of the "
      "4 /metrics endpoints every %s (order alternating); up to %d fetches or %s per half\n\n",
      options.transport, options.pin_threshold, options.rounds, absl::FormatDuration(options.scrape_interval),
      options.iterations, absl::FormatDuration(options.duration));

  struct PerSize {
    std::vector<double> p50[2];  // [unscraped, scraped], one per round
    std::vector<double> ratio;   // scraped / unscraped, per round
    int64_t scrapes = 0;
    int64_t scrape_failures = 0;
  };
  std::vector<PerSize> per_size(options.sizes.size());
  int64_t retries = 0;
  for (int64_t round = 0; round < options.rounds; ++round) {
    reporter->SetTag("round", static_cast<double>(round));
    for (size_t s = 0; s < options.sizes.size(); ++s) {
      const uint64_t size = options.sizes[s];
      double p50[2] = {0, 0};
      for (int half = 0; half < 2; ++half) {
        const int scraped = (round % 2 == 0) ? half : 1 - half;
        std::unique_ptr<Scraper> scraper;
        if (scraped) scraper = std::make_unique<Scraper>(ports, options.scrape_interval);
        ASSIGN_OR_RETURN(LatencySummary summary, RunHalf(options, a, b, size, &retries));
        if (scraper != nullptr) {
          per_size[s].scrapes += scraper->scrapes();
          per_size[s].scrape_failures += scraper->failures();
        }
        p50[scraped] = summary.p50_us;
        per_size[s].p50[scraped].push_back(summary.p50_us);
        uint64_t threshold = 0;
        const std::string protocol =
            absl::SimpleAtoi(options.pin_threshold, &threshold) ? (size <= threshold ? "get" : "pin") : "auto";
        BenchResult r = MakeResult("fetch", "rplasma", options.transport, protocol, size, summary);
        r.metrics = {{"scraped", static_cast<double>(scraped)}};
        RETURN_IF_ERROR(reporter->Add(std::move(r)));
      }
      per_size[s].ratio.push_back(p50[0] > 0 ? p50[1] / p50[0] : 0);
    }
  }

  out << absl::StrFormat("\n%-8s %14s %14s %8s %14s %9s %s\n", "size", "p50 unscraped", "p50 scraped", "ratio",
                         "median ratio", "scrapes", "(medians over rounds, us)");
  for (size_t s = 0; s < options.sizes.size(); ++s) {
    const PerSize& p = per_size[s];
    const double off = Median(p.p50[0]);
    const double on = Median(p.p50[1]);
    out << absl::StrFormat("%-8s %14.1f %14.1f %8.3f %14.3f %9d%s\n", FormatByteSize(options.sizes[s]), off, on,
                           off > 0 ? on / off : 0, Median(p.ratio), p.scrapes,
                           p.scrape_failures > 0 ? absl::StrCat(" (", p.scrape_failures, " failed)") : "");
  }
  if (retries > 0) out << "publish retries: " << retries << "\n";
  if (!options.csv_path.empty()) out << "\nCSV: " << options.csv_path << "\n";
  return absl::OkStatus();
}

}  // namespace rplasma::bench
