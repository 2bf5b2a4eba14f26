#include "protocol/base/clock.h"

#include "absl/time/clock.h"

namespace rplasma {
namespace {

class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  void SleepFor(absl::Duration duration) override { absl::SleepFor(duration); }
};

}  // namespace

Clock& Clock::Real() {
  static RealClock* const clock = new RealClock();  // never destroyed: usable during exit
  return *clock;
}

}  // namespace rplasma
