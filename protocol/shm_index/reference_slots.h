// ReferenceSlots: the objects one client holds through the get with no IPC, recorded in shared
// memory where the store sees them without being told (issue 13).
//
// Each client has its own region. The store creates it (a memfd of SlotRegionBytes(n), sealed
// against resizing), formats it, and sends it to that client only, which maps it read-write. A
// client can therefore write only its own slots, and whatever it writes there can only make the
// store keep objects longer, until its connection closes and the store forgets the region.
//
// A region is a header and `slots` atomic words, each 0 (free) or the generation of an object the
// client holds. A reference to generation g takes one word among the kSlotWindow words from
// SlotHome(g), claimed with a compare-exchange (any thread of the client); an object held twice
// takes two words. A full window means "no slot": the client takes the socket path.
//
// The handshake, all seq_cst, with no lock and no message:
//   client, get:     claim a word := g; then the index entry must still hold g, sealed
//                    (ObjectIndexReader::StillSealed); if not, word := 0 and use the socket.
//   store, reclaim:  entry := kReclaiming (ObjectIndexWriter::SetState); then look for g in every
//                    client's window (ReferenceSlotsView::Holds).
// The seq_cst operations have one total order. If the store looked before the client claimed, the
// client checks after the store wrote kReclaiming, and backs off; otherwise the store sees the
// word. So when the store finds no word for g, nobody holds the object and nobody can take it: it
// may be freed.
//   client, release: word := 0; then, if the entry may be kReclaiming (MayBeReclaiming), tell the
//                    store (a socket message), which finishes a reclaim that waited for this word.
//                    Backing off after a failed check is a release too: the store may have seen
//                    the word before the client saw kReclaiming.
// By the same order, if the store's look saw the word, the release sees kReclaiming.
//
// Access records (LRU through the index): after the words, each region holds a ring of the index
// entries its client read with no message (kAccessRing of them: a head counter and the entries).
// A get appends its entry; the store drains every ring before it picks eviction victims (and on
// each turn of its loop) and counts each record as a use of the object the entry holds then. A
// record the client garbled, or one overwritten before the drain, only ages an object a little
// wrongly; the index stays read-only to clients.
//
// Thread-safety: ReferenceSlots is thread-safe (atomics only); ReferenceSlotsView is read from the
// store's loop thread, concurrently with the client's writes.
#ifndef RPLASMA_PROTOCOL_SHM_INDEX_REFERENCE_SLOTS_H_
#define RPLASMA_PROTOCOL_SHM_INDEX_REFERENCE_SLOTS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace rplasma::shm {

inline constexpr uint64_t kSlotsMagic = 0x31746f6c53504c52;  // "RLPSlot1"
inline constexpr size_t kSlotWindow = 16;
inline constexpr uint64_t kAccessRing = 256;  // access records per client (a power of two)

struct alignas(64) SlotRegionHeader {
  std::atomic<uint64_t> magic;
  std::atomic<uint64_t> slots;  // a power of two
  std::atomic<uint64_t> reserved[6];
};
static_assert(sizeof(SlotRegionHeader) == 64);

size_t SlotRegionBytes(uint64_t slots);

// The first word of generation's window in a region of `slots` words (a power of two).
uint64_t SlotHome(uint64_t generation, uint64_t slots);

// A client's side.
class ReferenceSlots {
 public:
  // kProtocolError unless `region` holds a formatted header and every slot it announces.
  static absl::StatusOr<ReferenceSlots> Open(absl::Span<uint8_t> region);

  // Claims a word for `generation` (not 0) and returns its number; nullopt if the window is full.
  std::optional<uint64_t> Claim(uint64_t generation);
  // Frees word `slot`. REQUIRES: this client claimed it for an object it no longer uses.
  void Clear(uint64_t slot);
  // Frees word `slot` if it still holds `generation` (compare-exchange); false if it does not: a
  // hold already given back, whose word another get may have claimed since, is never cleared.
  bool ClearIf(uint64_t slot, uint64_t generation);
  // Frees one word of `generation`'s window that holds it (references to one object are alike);
  // its number, or nullopt if no word holds it.
  std::optional<uint64_t> ClearAny(uint64_t generation);
  // Records that this client read index entry `entry` (for the store's LRU).
  void RecordAccess(uint64_t entry);

  uint64_t slots() const { return slots_; }

 private:
  ReferenceSlots(std::atomic<uint64_t>* words, uint64_t slots) : words_(words), slots_(slots) {}

  std::atomic<uint64_t>* words_;  // slots_ words, then the ring's head and its kAccessRing records
  uint64_t slots_;
};

// The store's side of one client's region.
class ReferenceSlotsView {
 public:
  // Formats a zero-filled `region` of SlotRegionBytes(slots) bytes. kInvalidArgument unless slots
  // is a power of two >= kSlotWindow and the region fits it.
  static absl::StatusOr<ReferenceSlotsView> Format(absl::Span<uint8_t> region, uint64_t slots);

  // Whether the client holds the object of `generation` (a look at its window, seq_cst loads).
  bool Holds(uint64_t generation) const;
  // How many references to the object of `generation` the client holds (words of its window).
  uint64_t CountOf(uint64_t generation) const;
  // Words in use (a scan of the whole region; for audits and stats).
  uint64_t CountHeld() const;
  // Calls `accessed(entry)` for each access record written since the last drain (`*cursor`, the
  // caller's, starts at 0): at most kAccessRing, oldest first. The entries are the client's word:
  // the caller checks them.
  void DrainAccesses(uint64_t* cursor, absl::FunctionRef<void(uint64_t entry)> accessed) const;

  uint64_t slots() const { return slots_; }

 private:
  ReferenceSlotsView(const std::atomic<uint64_t>* words, uint64_t slots) : words_(words), slots_(slots) {}

  const std::atomic<uint64_t>* words_;
  uint64_t slots_;  // the store's own copy: the client can rewrite the header, not this
};

}  // namespace rplasma::shm

#endif  // RPLASMA_PROTOCOL_SHM_INDEX_REFERENCE_SLOTS_H_
