#include "protocol/base/counter_set.h"

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "nlohmann/json.hpp"

namespace rplasma {
namespace {

struct TestCounters : CounterSet {
  Counter sent{this, "sent"};
  Gauge open{this, "open"};
  Counter bytes{this, "bytes"};
};

std::vector<std::string> Names(const CounterSnapshot& s) {
  std::vector<std::string> names;
  for (const CounterSnapshot::Entry& e : s.entries()) names.emplace_back(e.name);
  return names;
}

TEST(CounterSetTest, SnapshotListsEveryMemberInDeclarationOrder) {
  TestCounters c;
  EXPECT_THAT(Names(c.Snapshot()), ::testing::ElementsAre("sent", "open", "bytes"));
}

TEST(CounterSetTest, SnapshotReadsTheValuesAtThatMoment) {
  TestCounters c;
  c.sent.fetch_add(2);
  c.bytes.fetch_add(4096);
  c.open.fetch_add(3);
  c.open.fetch_sub(1);
  const CounterSnapshot s = c.Snapshot();
  c.sent.fetch_add(100);
  EXPECT_EQ(s["sent"], 2u);
  EXPECT_EQ(s["open"], 2u);
  EXPECT_EQ(s["bytes"], 4096u);
  EXPECT_EQ(c.Snapshot()["sent"], 102u) << "a later snapshot sees the later value";
}

TEST(CounterSetTest, AGaugeDecrementedBelowZeroReadsAsZero) {
  TestCounters c;
  c.open.fetch_sub(1);
  EXPECT_EQ(c.open.load(), -1);
  EXPECT_EQ(c.Snapshot()["open"], 0u);
}

TEST(CounterSetTest, AReadingIsEvaluatedAtSnapshotTime) {
  uint64_t table_size = 5;
  struct WithReading : CounterSet {
    explicit WithReading(const uint64_t* size) : live{this, "live", [size] { return *size; }} {}
    Counter before{this, "before"};
    Reading live;
    Counter after{this, "after"};
  } c(&table_size);
  EXPECT_EQ(c.Snapshot()["live"], 5u);
  table_size = 7;
  EXPECT_EQ(c.Snapshot()["live"], 7u);
  EXPECT_THAT(Names(c.Snapshot()), ::testing::ElementsAre("before", "live", "after"));
}

TEST(CounterSetTest, MembersMayRegisterWithAnotherSet) {
  struct Split : CounterSet {
    Counter reported{this, "reported"};
    CounterSet internal;
    Counter hidden{&internal, "hidden"};
  } c;
  c.hidden.fetch_add(1);
  EXPECT_THAT(Names(c.Snapshot()), ::testing::ElementsAre("reported"));
  EXPECT_EQ(c.internal.Snapshot()["hidden"], 1u);
}

TEST(CounterSetTest, SetReplacesOneValueOfASnapshot) {
  TestCounters c;
  c.sent.fetch_add(1);
  CounterSnapshot s = c.Snapshot();
  s.Set("bytes", 9);
  EXPECT_EQ(s["bytes"], 9u);
  EXPECT_EQ(s["sent"], 1u);
  EXPECT_TRUE(s.contains("open"));
  EXPECT_FALSE(s.contains("closed"));
}

TEST(CounterSetTest, AGaugeMayBeStoredToMirrorAValueKeptElsewhere) {
  TestCounters c;
  c.open.fetch_add(5);
  c.open.store(2);
  EXPECT_EQ(c.Snapshot()["open"], 2u);
}

TEST(CounterSetTest, EachEntryCarriesItsMemberMetricAndTypeOrNone) {
  struct WithMetrics : CounterSet {
    Counter plain{this, "plain"};
    Counter sent{this, "sent", "x_sent_total", "Sent."};
    Gauge open{this, "open", "x_open", "Open."};
    Reading size{this, "size", MetricType::kCounter, "x_size_total", "Size.", [] { return uint64_t{3}; }};
  } c;
  const CounterSnapshot s = c.Snapshot();
  const std::vector<CounterSnapshot::Entry>& e = s.entries();
  ASSERT_EQ(e.size(), 4u);
  EXPECT_TRUE(e[0].metric.empty());
  EXPECT_EQ(e[1].metric, "x_sent_total");
  EXPECT_EQ(e[1].help, "Sent.");
  EXPECT_EQ(e[1].type, MetricType::kCounter);
  EXPECT_EQ(e[2].type, MetricType::kGauge);
  EXPECT_EQ(e[3].type, MetricType::kCounter);
  EXPECT_EQ(e[3].value, 3u);
}

TEST(CounterSetDeathTest, AskingForAnUndeclaredNameIsABug) {
  TestCounters c;
  EXPECT_DEATH((void)c.Snapshot()["sen"], "no counter named \"sen\"");
}

TEST(CounterSetDeathTest, DeclaringANameTwiceIsABug) {
  struct Twice : CounterSet {
    Counter a{this, "a"};
    Counter b{this, "a"};
  };
  EXPECT_DEATH(Twice t, "declared twice");
}

TEST(CounterSetTest, ConcurrentIncrementsAreAllCounted) {
  TestCounters c;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 10000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        c.sent.fetch_add(1);
        c.open.fetch_add(1);
        c.open.fetch_sub(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(c.Snapshot()["sent"], static_cast<uint64_t>(kThreads * kPerThread));
  EXPECT_EQ(c.Snapshot()["open"], 0u);
}

TEST(CounterSetTest, SnapshotJsonHasOneNumberPerCounterInOrder) {
  TestCounters c;
  c.sent.fetch_add(3);
  c.bytes.fetch_add(UINT64_MAX);
  const std::string text = c.Snapshot().ToJson().str();
  EXPECT_EQ(text, R"({"sent":3,"open":0,"bytes":18446744073709551615})");
  const nlohmann::json parsed = nlohmann::json::parse(text);
  EXPECT_EQ(parsed["bytes"].get<uint64_t>(), UINT64_MAX);
}

}  // namespace
}  // namespace rplasma
