// The handshake of reference_slots.h under contention, in one process (CI runs it under TSan too).
// A store thread creates, evicts, deletes and re-creates a few ids over a small pool of blocks,
// writing each block with its object's pattern before it indexes it and poisoning it when it frees
// it. Reader threads find, claim, check, read and release at random, and tell the store when a
// release may finish a reclaim. Pass: no reader ever reads bytes that are not its object's, every
// delete that had to wait for a reader is finished by that reader's notice, and no slot stays held.
// The block words are plain memory on purpose: under TSan, any read the handshake fails to order
// against the store's poisoning is a reported race. RPLASMA_TORTURE_MS sets the length (1000 ms).
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include <gtest/gtest.h>

#include "protocol/base/mutex_lock.h"
#include "protocol/shm_index/object_index.h"
#include "protocol/shm_index/reference_slots.h"
#include "tests/unit/shm_index/aligned_region.h"

namespace rplasma::shm {
namespace {

constexpr int kIds = 24;
constexpr int kBlocks = 16;
constexpr int kBlockWords = 32;
constexpr int kReaders = 3;
constexpr uint64_t kSlotsPerReader = 64;

uint64_t Pattern(uint64_t generation, int word) {
  return generation * 0x9e3779b97f4a7c15 + static_cast<uint64_t>(word);
}
constexpr uint64_t kPoison = 0xdeaddeaddeaddeadULL;

absl::Duration TortureLength() {
  const char* ms = std::getenv("RPLASMA_TORTURE_MS");
  return absl::Milliseconds(ms != nullptr ? std::atoi(ms) : 1000);
}

struct Counts {
  std::atomic<uint64_t> reads{0}, mismatches{0}, backoffs{0}, notices{0};
};

class Torture {
 public:
  Torture() : index_region_(ObjectIndexBytes(kIndexCapacity)) {
    absl::Span<uint8_t> index = index_region_.span(ObjectIndexBytes(kIndexCapacity));
    writer_.emplace(*ObjectIndexWriter::Create(index, kIndexCapacity));
    reader_.emplace(*ObjectIndexReader::Open(index));
    for (int r = 0; r < kReaders; ++r) {
      slot_regions_.emplace_back(SlotRegionBytes(kSlotsPerReader));
      views_.push_back(
          *ReferenceSlotsView::Format(slot_regions_.back().span(SlotRegionBytes(kSlotsPerReader)), kSlotsPerReader));
    }
    for (int i = 0; i < kIds; ++i) ids_.push_back(ObjectID::FromLabel(absl::StrCat("torture ", i)));
  }

  void Run(absl::Duration length) {
    std::vector<std::thread> readers;
    for (int r = 0; r < kReaders; ++r) readers.emplace_back([this, r] { Read(r); });
    Store(absl::Now() + length);
    stop_.store(true);
    for (std::thread& t : readers) t.join();
    DrainNotices();
  }

  const Counts& counts() const { return counts_; }
  uint64_t reclaimed() const { return reclaimed_; }
  uint64_t waited_deletes() const { return waited_deletes_; }
  uint64_t finished_by_notice() const { return finished_by_notice_; }
  uint64_t still_pending() const {
    uint64_t pending = 0;
    for (const auto& [i, object] : live_) pending += object.pending_delete ? 1 : 0;
    return pending;
  }
  uint64_t slots_held() const {
    uint64_t held = 0;
    for (const ReferenceSlotsView& view : views_) held += view.CountHeld();
    return held;
  }

 private:
  static constexpr uint64_t kIndexCapacity = 256;

  struct Object {
    uint64_t entry = 0;
    uint64_t generation = 0;
    int block = 0;
    bool pending_delete = false;
  };

  bool Held(uint64_t generation) const {
    for (const ReferenceSlotsView& view : views_) {
      if (view.Holds(generation)) return true;
    }
    return false;
  }

  void Free(int i) {
    const Object object = live_.at(i);
    writer_->SetState(object.entry, IndexState::kTombstone);
    for (int w = 0; w < kBlockWords; ++w) arena_[object.block * kBlockWords + w] = kPoison;
    free_blocks_.push_back(object.block);
    live_.erase(i);
    ++reclaimed_;
  }

  void DrainNotices() {
    std::vector<uint64_t> notices;
    {
      MutexLock lock(&mu_);
      notices.swap(notices_);
    }
    for (uint64_t generation : notices) {
      for (auto& [i, object] : live_) {
        if (object.generation != generation || !object.pending_delete || Held(generation)) continue;
        ++finished_by_notice_;
        Free(i);
        break;
      }
    }
  }

  // The store: only this thread writes the index and the blocks.
  void Store(absl::Time deadline) {
    for (int b = 0; b < kBlocks; ++b) free_blocks_.push_back(b);
    std::mt19937_64 random(7);
    uint64_t next_generation = 1;
    while (absl::Now() < deadline) {
      DrainNotices();
      const int i = static_cast<int>(random() % kIds);
      auto it = live_.find(i);
      if (it == live_.end()) {
        if (free_blocks_.empty()) continue;
        const int block = free_blocks_.back();
        const uint64_t generation = next_generation++;
        for (int w = 0; w < kBlockWords; ++w) arena_[block * kBlockWords + w] = Pattern(generation, w);
        const std::optional<uint64_t> entry =
            writer_->Insert(ids_[i], {.offset = static_cast<uint64_t>(block) * kBlockWords * 8,
                                      .data_size = kBlockWords * 8,
                                      .generation = generation});
        if (!entry.has_value()) continue;  // window full: left to the socket path
        free_blocks_.pop_back();
        live_[i] = Object{*entry, generation, block, false};
        continue;
      }
      Object& object = it->second;
      if (object.pending_delete) continue;  // waits for a reader's notice
      writer_->SetState(object.entry, IndexState::kReclaiming);
      if (!Held(object.generation)) {
        Free(i);
      } else if (random() % 2 == 0) {
        writer_->SetState(object.entry, IndexState::kSealed);  // an eviction skips a held object
      } else {
        object.pending_delete = true;  // a delete: freed when the last holder's notice comes
        ++waited_deletes_;
      }
      if (random() % 16 == 0) std::this_thread::yield();
    }
  }

  void Read(int r) {
    ReferenceSlots slots = *ReferenceSlots::Open(slot_regions_[r].span(SlotRegionBytes(kSlotsPerReader)));
    std::mt19937_64 random(100 + r);
    while (!stop_.load(std::memory_order_relaxed)) {
      const ObjectID& id = ids_[random() % kIds];
      const std::optional<IndexedObject> found = reader_->FindSealed(id);
      if (!found.has_value()) continue;
      const uint64_t generation = found->placement.generation;
      const std::optional<uint64_t> slot = slots.Claim(generation);
      if (!slot.has_value()) continue;
      // Every clear is a release, a back-off too: a store that saw the claimed word waits for it.
      auto release = [&] {
        slots.Clear(*slot);
        if (!reader_->MayBeReclaiming(found->entry)) return;
        counts_.notices.fetch_add(1, std::memory_order_relaxed);
        MutexLock lock(&mu_);
        notices_.push_back(generation);
      };
      if (!reader_->StillSealed(found->entry, generation)) {
        release();
        counts_.backoffs.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      const uint64_t first = found->placement.offset / 8;
      bool intact = first + kBlockWords <= arena_.size();
      // Read the bytes twice, sometimes with a pause between, so the store often finds them held.
      for (int pass = 0; pass < 2 && intact; ++pass) {
        for (int w = 0; w < kBlockWords; ++w) intact = intact && arena_[first + w] == Pattern(generation, w);
        if (pass == 0 && random() % 8 == 0) absl::SleepFor(absl::Microseconds(20));
      }
      counts_.reads.fetch_add(1, std::memory_order_relaxed);
      if (!intact) counts_.mismatches.fetch_add(1, std::memory_order_relaxed);
      release();
    }
  }

  AlignedRegion index_region_;
  std::optional<ObjectIndexWriter> writer_;
  std::optional<ObjectIndexReader> reader_;
  std::vector<AlignedRegion> slot_regions_;
  std::vector<ReferenceSlotsView> views_;
  std::vector<ObjectID> ids_;
  std::vector<uint64_t> arena_ = std::vector<uint64_t>(kBlocks * kBlockWords, kPoison);
  std::atomic<bool> stop_{false};
  Counts counts_;
  absl::Mutex mu_;
  std::vector<uint64_t> notices_ ABSL_GUARDED_BY(mu_);
  // The store thread's own state.
  absl::flat_hash_map<int, Object> live_;
  std::vector<int> free_blocks_;
  uint64_t reclaimed_ = 0;
  uint64_t waited_deletes_ = 0;
  uint64_t finished_by_notice_ = 0;
};

TEST(HandshakeTortureTest, NoReaderSeesAReclaimedBlockAndEveryWaitingDeleteFinishes) {
  Torture torture;
  torture.Run(TortureLength());
  const Counts& counts = torture.counts();
  std::printf(
      "reads %lu, mismatches %lu, backoffs %lu, notices %lu, reclaimed %lu, deletes that waited %lu, "
      "finished by a notice %lu\n",
      counts.reads.load(), counts.mismatches.load(), counts.backoffs.load(), counts.notices.load(), torture.reclaimed(),
      torture.waited_deletes(), torture.finished_by_notice());
  EXPECT_EQ(counts.mismatches.load(), 0u);
  EXPECT_GT(counts.reads.load(), 100u);
  EXPECT_GT(torture.reclaimed(), 100u);
  EXPECT_GT(torture.waited_deletes(), 0u);
  // Every delete that found a holder was finished by a holder's notice: no release missed one.
  EXPECT_EQ(torture.still_pending(), 0u);
  EXPECT_EQ(torture.finished_by_notice(), torture.waited_deletes());
  EXPECT_EQ(torture.slots_held(), 0u);
}

}  // namespace
}  // namespace rplasma::shm
