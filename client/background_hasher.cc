#include "client/background_hasher.h"

#include "client/checksum.h"
#include "protocol/base/mutex_lock.h"

namespace rplasma {

BackgroundHasher::BackgroundHasher(const uint8_t* base, uint64_t size)
    : base_(base), size_(size), thread_([this] { Run(); }) {}

BackgroundHasher::~BackgroundHasher() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
    advanced_.Signal();
  }
  thread_.join();
}

void BackgroundHasher::Advance(uint64_t landed) {
  MutexLock lock(&mu_);
  landed_ = landed;
  advanced_.Signal();
}

uint64_t BackgroundHasher::Finish() {
  MutexLock lock(&mu_);
  while (!done_) lock.Wait(&finished_);
  return checksum_;
}

void BackgroundHasher::Run() {
  ChecksumBuilder hash;
  uint64_t hashed = 0;
  while (true) {
    uint64_t landed;
    {
      MutexLock lock(&mu_);
      while (!stop_ && landed_ <= hashed && hashed < size_) lock.Wait(&advanced_);
      if (stop_) return;
      landed = landed_;
    }
    if (landed > hashed) {
      hash.Update({base_ + hashed, landed - hashed});
      hashed = landed;
    }
    if (hashed >= size_) break;
  }
  MutexLock lock(&mu_);
  checksum_ = hash.Finish();
  done_ = true;
  finished_.Signal();
}

}  // namespace rplasma
