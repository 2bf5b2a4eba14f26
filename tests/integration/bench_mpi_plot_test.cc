// scripts/plot-bench.sh (gnuplot on bench-mpi/mpi/plot_bench.gp) on small hand-written CSVs in
// rplasma-bench-mpi's columns: one column of panels per pattern plus the auto / best fixed column,
// so the picture widens with the patterns; a CSV without auto or tcp_stream rows, or at another
// concurrency, still gives a PNG; an unreadable CSV is an error. No MPI run.
#include <sys/wait.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include <gtest/gtest.h>

#include "tests/integration/bench_mpi_run.h"

namespace rplasma::testing {
namespace {

constexpr char kHeader[] =
    "benchmark,system,transport,protocol,object_size,ops_per_s,gb_per_s,p50_us,p99_us,pattern,ranks,"
    "concurrency,mean_us,p95_us,rank,aggregate,auto_vs_best\n";

// Aggregate rows of one pattern at 1K, 64K and 1M: get wins at 1K and 64K, pin from 1M on (so
// the crossover is 1M); `auto` rows carry auto / best fixed.
std::string PatternRows(const std::string& pattern, int concurrency, const std::vector<std::string>& protocols) {
  std::string out;
  for (uint64_t size : {uint64_t{1} << 10, uint64_t{1} << 16, uint64_t{1} << 20}) {
    const double get_us = 100 + size / 500.0;
    const double pin_us = 200 + size / 2000.0;
    for (const std::string& protocol : protocols) {
      const double us = protocol == "get" ? get_us : protocol == "pin" ? pin_us : 1.05 * std::min(get_us, pin_us);
      const std::string ratio = protocol == "auto" ? absl::StrFormat("%.4f", std::min(get_us, pin_us) / us) : "";
      absl::StrAppendFormat(&out, "fetch,rplasma,tcp,%s,%d,%.1f,%.6f,%.1f,%.1f,%s,2,%d,%.1f,%.1f,all,1,%s\n", protocol,
                            size, 1e6 / us, size / us / 1e3, us, 2 * us, pattern, concurrency, us, 1.5 * us, ratio);
    }
  }
  return out;
}

std::string PeerRows() {
  std::string out;
  for (uint64_t size : {uint64_t{1} << 10, uint64_t{1} << 16, uint64_t{1} << 20}) {
    const double us = 50 + size / 1000.0;
    absl::StrAppendFormat(&out, "fetch,tcp_stream,tcp,-,%d,%.1f,%.6f,%.1f,%.1f,pairs,2,1,%.1f,%.1f,all,1,\n", size,
                          1e6 / us, size / us / 1e3, us, 2 * us, us, 1.5 * us);
  }
  return out;
}

struct Plot {
  int exit_code = -1;
  std::string output;  // the script's and gnuplot's stdout and stderr
  std::string png;
};

class BenchMpiPlotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveGnuplot()) RPLASMA_SKIP_TEST("gnuplot", "gnuplot is not installed (gnuplot-nox)");
  }

  // scripts/plot-bench.sh dir/<name>.csv dir/<name>.png [concurrency], with `csv` as the CSV.
  Plot Draw(const std::string& name, const std::string& csv, const std::string& concurrency = "") {
    const std::string csv_path = dir_.Join(name + ".csv");
    const std::string png_path = dir_.Join(name + ".png");
    const std::string log = dir_.Join(name + ".log");
    std::ofstream(csv_path) << csv;
    const std::string command = absl::StrCat(RPLASMA_SOURCE_DIR, "/scripts/plot-bench.sh ", csv_path, " ", png_path,
                                             " ", concurrency, " >", log, " 2>&1");
    const int status = std::system(command.c_str());
    Plot plot;
    plot.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    plot.output = bench::ReadWholeFile(log);
    plot.png = bench::ReadWholeFile(png_path);
    return plot;
  }

  bench::ScratchDir dir_ = bench::ScratchDir::CreateOrDie();
};

// A PNG's width in pixels (IHDR, bytes 16..19, big-endian); 0 if `png` is not one.
uint32_t PngWidth(const std::string& png) {
  if (png.size() < 24 || png.substr(1, 3) != "PNG") return 0;
  uint32_t width = 0;
  for (int i = 16; i < 20; ++i) width = width << 8 | static_cast<uint8_t>(png[i]);
  return width;
}

TEST_F(BenchMpiPlotTest, EachPatternGetsItsOwnColumnOfPanels) {
  const std::vector<std::string> all = {"get", "pin", "auto"};
  const Plot one = Draw("one", kHeader + PatternRows("pairs", 1, all) + PeerRows());
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const Plot two = Draw("two", kHeader + PatternRows("pairs", 1, all) + PatternRows("gather", 1, all) + PeerRows());
  ASSERT_EQ(two.exit_code, 0) << two.output;
  // Every series had rows: gnuplot had nothing to warn about.
  EXPECT_FALSE(absl::StrContains(two.output, "warning")) << two.output;
  ASSERT_GT(PngWidth(one.png), 0u) << one.output;
  // pairs and the ratio column, then pairs, gather and the ratio column: a third wider.
  EXPECT_EQ(PngWidth(two.png) * 2, PngWidth(one.png) * 3);
}

TEST_F(BenchMpiPlotTest, ACsvWithoutAutoOrTcpStreamRowsStillPlots) {
  const Plot plot =
      Draw("fixed", kHeader + PatternRows("pairs", 1, {"get", "pin"}) + PatternRows("broadcast", 1, {"get", "pin"}));
  ASSERT_EQ(plot.exit_code, 0) << plot.output;
  EXPECT_GT(PngWidth(plot.png), 0u) << plot.output;
}

TEST_F(BenchMpiPlotTest, TheConcurrencyArgumentPicksItsRowsAndTheDefaultIsTheLowestInTheCsv) {
  const std::string csv = kHeader + PatternRows("pairs", 2, {"get", "pin", "auto"}) +
                          PatternRows("pairs", 4, {"get", "pin", "auto"}) + PeerRows();
  const Plot four = Draw("four", csv, "4");
  ASSERT_EQ(four.exit_code, 0) << four.output;
  EXPECT_GT(PngWidth(four.png), 0u) << four.output;
  // Without the argument: concurrency 2, not 1 (which has no rows, and would leave one message
  // panel where pairs and the ratio column are).
  const Plot lowest = Draw("lowest", csv);
  ASSERT_EQ(lowest.exit_code, 0) << lowest.output;
  EXPECT_EQ(PngWidth(lowest.png), PngWidth(four.png)) << lowest.output;
}

TEST_F(BenchMpiPlotTest, AnUnreadableCsvIsAnErrorThatNamesIt) {
  const std::string missing = dir_.Join("missing.csv");
  const std::string command = absl::StrCat(RPLASMA_SOURCE_DIR, "/scripts/plot-bench.sh ", missing, " ",
                                           dir_.Join("missing.png"), " >", dir_.Join("missing.log"), " 2>&1");
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0);
  EXPECT_TRUE(absl::StrContains(bench::ReadWholeFile(dir_.Join("missing.log")), "cannot read " + missing));
}

}  // namespace
}  // namespace rplasma::testing
