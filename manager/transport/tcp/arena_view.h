// ArenaView: the registered arena as both sides of a tcp connection see it — where Reads land
// (reader) and what peers may read (owner). Plain data; {nullptr, 0} until RegisterArena.
#ifndef RPLASMA_MANAGER_TRANSPORT_TCP_ARENA_VIEW_H_
#define RPLASMA_MANAGER_TRANSPORT_TCP_ARENA_VIEW_H_

#include <cstdint>

namespace rplasma::transport::tcp {

struct ArenaView {
  uint8_t* base = nullptr;
  uint64_t size = 0;

  bool registered() const { return base != nullptr; }
  // Is [offset, offset + length) inside the arena? Overflow-safe.
  bool ContainsRange(uint64_t offset, uint64_t length) const {
    return registered() && offset <= size && length <= size - offset;
  }
};

}  // namespace rplasma::transport::tcp

#endif  // RPLASMA_MANAGER_TRANSPORT_TCP_ARENA_VIEW_H_
