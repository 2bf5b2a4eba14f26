// TcpCounters: the tcp transport's statistics as lock-free atomics, shared (via shared_ptr) by the
// transport, its server connections and its channels, so a channel may outlive its transport.
// Thread-safe; relaxed ordering (counters, not synchronisation).
#ifndef RPLASMA_MANAGER_TRANSPORT_TCP_TCP_COUNTERS_H_
#define RPLASMA_MANAGER_TRANSPORT_TCP_TCP_COUNTERS_H_

#include <atomic>
#include <cstdint>

#include "manager/transport/transport.h"

namespace rplasma::transport::tcp {

struct TcpCounters {
  std::atomic<uint64_t> tx_bytes{0};
  std::atomic<uint64_t> rx_bytes{0};
  std::atomic<uint64_t> tx_messages{0};
  std::atomic<uint64_t> rx_messages{0};
  std::atomic<uint64_t> reads{0};
  std::atomic<uint64_t> read_bytes{0};
  std::atomic<int64_t> connections{0};
  std::atomic<uint64_t> auth_failures{0};
  std::atomic<uint64_t> errors{0};
  std::atomic<uint64_t> reconnects{0};

  static void Add(std::atomic<uint64_t>& c, uint64_t n) { c.fetch_add(n, std::memory_order_relaxed); }

  TransportStats Snapshot() const {
    TransportStats s;
    s.tx_bytes = tx_bytes.load(std::memory_order_relaxed);
    s.rx_bytes = rx_bytes.load(std::memory_order_relaxed);
    s.tx_messages = tx_messages.load(std::memory_order_relaxed);
    s.rx_messages = rx_messages.load(std::memory_order_relaxed);
    s.reads = reads.load(std::memory_order_relaxed);
    s.read_bytes = read_bytes.load(std::memory_order_relaxed);
    int64_t open = connections.load(std::memory_order_relaxed);
    s.connections = open > 0 ? static_cast<uint64_t>(open) : 0;
    s.auth_failures = auth_failures.load(std::memory_order_relaxed);
    s.errors = errors.load(std::memory_order_relaxed);
    s.reconnects = reconnects.load(std::memory_order_relaxed);
    return s;
  }
};

// The registered arena as both sides see it: where Reads land (reader) and what peers may read
// (owner). Plain data; {nullptr, 0} until RegisterArena.
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

#endif  // RPLASMA_MANAGER_TRANSPORT_TCP_TCP_COUNTERS_H_
