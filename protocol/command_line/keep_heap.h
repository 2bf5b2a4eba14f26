// KeepHeap: a daemon keeps the heap memory it freed instead of handing it back to the kernel.
//
// The store and the manager allocate and free a buffer of a few hundred KiB per batch request (a
// reply to a CreateBatch of 1000 ids, a burst of seal events, a reply carrying objects inline).
// With glibc's defaults each such free above the heap's top returns the memory (brk shrink or
// munmap), which on a multi-core machine is a TLB shootdown of every other CPU, and the next
// request faults every page back in. Measured on the 2-vCPU development VM, a loop of warm
// 1000 x 1 KiB fetches: the store spent 15% of its CPU there (9% in the shootdown IPIs, 6% in page
// faults); with the heap kept, the store's CPU per fetch fell from 2.2-2.9 ms to 1.5-1.9 ms.
// The price is up to kTrimThresholdBytes of freed memory held per malloc arena (RSS a daemon's
// busiest minute already needed).
//
// Call once at the start of main, before any thread starts.
#ifndef RPLASMA_PROTOCOL_COMMAND_LINE_KEEP_HEAP_H_
#define RPLASMA_PROTOCOL_COMMAND_LINE_KEEP_HEAP_H_

#include <cstddef>

namespace rplasma {

// Freed memory at the top of a heap is returned only beyond this (glibc's M_TRIM_THRESHOLD)...
inline constexpr size_t kTrimThresholdBytes = size_t{64} << 20;
// ...and the heap grows by this much more than asked (M_TOP_PAD), so a growing burst needs few brks.
inline constexpr size_t kTopPadBytes = size_t{16} << 20;

// Applies both (mallopt). Does nothing where the C library has no such settings.
void KeepHeap();

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_COMMAND_LINE_KEEP_HEAP_H_
