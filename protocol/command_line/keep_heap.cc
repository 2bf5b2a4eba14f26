#include "protocol/command_line/keep_heap.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace rplasma {

void KeepHeap() {
#if defined(__GLIBC__)
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(kTrimThresholdBytes));
  mallopt(M_TOP_PAD, static_cast<int>(kTopPadBytes));
#endif
}

}  // namespace rplasma
