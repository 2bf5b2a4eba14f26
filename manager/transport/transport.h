// The seam between the manager and the wire. Two implementations: tcp/ (any Ethernet) and verbs/
// (rdma_cm + RC QPs). The manager's peer protocol (manager/peer/) speaks only through this.
//
// Layering (per transport): Transport (one per manager: listener, registered arena, connection
// cache policy) -> Channel (one per remote peer manager: authenticated, reused, thread-safe).
//
// Two ways to move bytes, matching the design's two protocols:
//   Call  — two-sided: one request message, one reply message (SEND/RECV on verbs; framed
//           messages on TCP). Used for Get (bytes inline in the reply), Pin, Unpin, and control.
//           Any message size up to kMaxCallBytes works: transports split internally to respect
//           device limits, whatever the batch.
//   Read  — one-sided: copy a remote region that the peer disclosed (address + rkey from its Pin
//           reply) straight into local memory inside the registered arena. RDMA READ on verbs
//           (owner CPU idle); on TCP the owner's transport streams the region and the reader
//           recv()s directly into the destination (no intermediate buffer).
//
// Authentication: Connect/accept run the shared-secret HMAC challenge–response
// (manager/auth/) before any request is answered, any QP is created or any rkey disclosed.
#ifndef RPLASMA_MANAGER_TRANSPORT_TRANSPORT_H_
#define RPLASMA_MANAGER_TRANSPORT_TRANSPORT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

#include "protocol/base/counter_set.h"

namespace rplasma::transport {

// Largest request or reply a Call may carry (the small-object threshold can never exceed this).
inline constexpr size_t kMaxCallBytes = 64u << 20;

// Where a pinned object lives in its owner's registered arena.
struct RemoteRegion {
  uint64_t addr = 0;  // owner's virtual address (verbs) or arena offset (tcp); opaque to the reader
  uint64_t length = 0;
  uint32_t rkey = 0;  // verbs: the owner's MR rkey; tcp: 0
};

struct TransportOptions {
  std::string secret;  // shared secret for peer authentication; empty refuses every peer
  // verbs only (ignored by tcp):
  std::string rdma_device;                                   // "" = chosen from the address by rdma_cm
  int qp_timeout = 14;                                       // 4.096 us * 2^timeout per retry (14 ~ 67 ms)
  int retry_count = 7;                                       // 0..7, never infinite
  int rnr_retry = 6;                                         // 0..6 (7 = infinite is refused); credits make RNR rare
  uint32_t queue_depth = 64;                                 // send/recv work requests per QP
  uint32_t message_bytes = 64 * 1024;                        // receive buffer size; larger Calls are split
  uint32_t max_reads_in_flight = 16;                         // clamped to the device's max_qp_rd_atom
  uint64_t read_chunk_bytes = 1 << 20;                       // one RDMA READ work request
  absl::Duration response_send_timeout = absl::Seconds(30);  // serving side: bound on sending one reply
  // Busy-poll the CQ this long after a completion before arming it and sleeping on the completion
  // channel (0 = sleep at once, fewest CPU cycles, a thread wake-up per completion). 0..10 ms.
  absl::Duration cq_spin = absl::Microseconds(50);
  absl::Duration connect_timeout = absl::Seconds(5);
  // Serving side, both transports: a connection that has not proved the secret yet holds no thread
  // (one HandshakePool runs them all) and must finish the handshake within handshake_timeout
  // (10 ms..1 min). At most max_handshakes run at once, max_handshakes_per_source from one address
  // (1..max_handshakes); past a cap the oldest is closed, so a flood cannot lock real peers out.
  absl::Duration handshake_timeout = absl::Seconds(1);
  uint32_t max_handshakes = 128;  // 1..65536
  uint32_t max_handshakes_per_source = 16;

  absl::Status Validate() const;
};

// The counters every transport keeps, shared (via shared_ptr) by the transport and its
// connections; the manager's stats JSON shows a snapshot as "transport_stats", in this order, and
// its metrics render it with the transport's name as the `transport` label (manager_metrics.h).
// rx_bytes has no metric of its own: rplasma_manager_transport_received_bytes_total adds to it
// the bytes a verbs transport pulled by RDMA READ.
struct TransportCounters : CounterSet {
  Counter tx_bytes{this, "tx_bytes", "rplasma_manager_transport_sent_bytes_total",
                   "Bytes this node sent to peers in messages (RDMA READs served by the NIC are not seen)."};
  Counter rx_bytes{this, "rx_bytes"};
  Counter tx_messages{this, "tx_messages", "rplasma_manager_transport_sent_messages_total", "Messages sent to peers."};
  Counter rx_messages{this, "rx_messages", "rplasma_manager_transport_received_messages_total",
                      "Messages received from peers."};
  Counter reads{this, "reads", "rplasma_manager_transport_reads_total", "Remote reads completed."};
  Counter read_bytes{this, "read_bytes", "rplasma_manager_transport_read_bytes_total", "Bytes pulled by remote reads."};
  Gauge connections{this, "connections", "rplasma_manager_transport_connections", "Open peer connections."};
  Counter auth_failures{this, "auth_failures", "rplasma_manager_transport_auth_failures_total",
                        "Peer handshakes refused for a bad secret."};
  Counter errors{this, "errors", "rplasma_manager_transport_errors_total", "Failed peer calls and reads."};
  Counter reconnects{this, "reconnects", "rplasma_manager_transport_reconnects_total",
                     "Channels rebuilt after an error."};  // channels (QPs)
};

// A TransportCounters snapshot: stats()["reads"].
using TransportStats = CounterSnapshot;

// A Call's reply as the serving side hands it to its transport: `head`, then each span of `tail`,
// sent in order as one message. The tail lets a reply carry bytes that live elsewhere (objects in
// the arena) without first copying them into one buffer (gather on send); `keep` owns what keeps
// them valid (e.g. store pins) and is dropped once the transport has sent the reply or failed to.
// A std::string converts to a reply of that head alone.
struct CallReply {
  CallReply() = default;
  CallReply(std::string bytes) : head(std::move(bytes)) {}  // NOLINT(google-explicit-constructor)
  CallReply(const char* bytes) : head(bytes) {}             // NOLINT(google-explicit-constructor)

  size_t size() const {
    size_t n = head.size();
    for (absl::string_view part : tail) n += part.size();
    return n;
  }
  // What a transport sends, in order: the head, then each part of the tail.
  absl::InlinedVector<absl::string_view, 8> Parts() const {
    absl::InlinedVector<absl::string_view, 8> parts;
    parts.reserve(1 + tail.size());
    parts.push_back(head);
    parts.insert(parts.end(), tail.begin(), tail.end());
    return parts;
  }
  // The whole reply in one buffer (a copy), for in-process callers.
  std::string Flatten() const {
    std::string out;
    out.reserve(size());
    out.append(head);
    for (absl::string_view part : tail) out.append(part.data(), part.size());
    return out;
  }

  std::string head;
  std::vector<absl::string_view> tail;
  std::shared_ptr<const void> keep;
};

// Serves the requests of remote peers. Called on transport threads, possibly concurrently for
// different connections: implementations must be thread-safe.
class RequestHandler {
 public:
  virtual ~RequestHandler() = default;
  // An authenticated peer connected; `conn_id` is unique for the transport's lifetime.
  virtual void OnConnect(uint64_t conn_id, const std::string& peer_address) {}
  // The reply to one Call. Must not block for long: it runs on a transport thread.
  virtual CallReply HandleCall(uint64_t conn_id, absl::string_view request) = 0;
  // tcp only: may `conn_id` read this region (is it inside a live lease of that connection)?
  // verbs never asks: the NIC reads on its own within the registered, read-only MR.
  virtual bool AllowRead(uint64_t conn_id, const RemoteRegion& region) = 0;
  // The connection is gone (closed, failed, or its peer died): drop what it held (pins).
  virtual void OnDisconnect(uint64_t conn_id) = 0;
};

// One authenticated connection to a peer manager. Thread-safe: several Calls and Reads may be in
// flight at once. After an error the channel may rebuild itself (healthy() tells); callers retry
// at their level.
class Channel {
 public:
  virtual ~Channel() = default;
  virtual absl::StatusOr<std::string> Call(absl::string_view request, absl::Time deadline) = 0;
  // Copies `region` into [dst, dst + region.length). REQUIRES: dst lies inside the arena registered
  // with this transport. On error the destination bytes are unspecified.
  virtual absl::Status Read(const RemoteRegion& region, uint8_t* dst, absl::Time deadline) = 0;
  virtual bool healthy() const = 0;
  virtual const std::string& peer_address() const = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual absl::string_view name() const = 0;  // "tcp" or "verbs"

  // Registers the local arena once, before Listen/Connect: the destination of Reads, and (for the
  // serving side) the source that peers read. verbs: one MR, local write + remote read only.
  virtual absl::Status RegisterArena(uint8_t* base, uint64_t size) = 0;
  // The RemoteRegion a peer needs to read [base + offset, + length) of our arena.
  virtual RemoteRegion RegionFor(uint64_t offset, uint64_t length) const = 0;

  // Starts accepting peers at `address` ("host:port"; port 0 picks one). Returns the bound address.
  virtual absl::StatusOr<std::string> Listen(const std::string& address, RequestHandler* handler) = 0;
  // Opens (authenticates) a channel to the peer listening at `address`.
  virtual absl::StatusOr<std::shared_ptr<Channel>> Connect(const std::string& address, absl::Time deadline) = 0;
  // A channel of the caller's own, not the one Connect shares, closed when its last holder lets
  // go: for traffic that must not shape the shared channel. A TCP connection keeps what its
  // traffic taught it (windows, autotuned buffers): after the threshold probe's replies of up to
  // 4 MiB, later 256 KiB Gets on the same connection took 1.3-1.6x as long, in about half the
  // runs. A transport whose channels keep no such state may return Connect's channel.
  virtual absl::StatusOr<std::shared_ptr<Channel>> ConnectPrivate(const std::string& address, absl::Time deadline) = 0;

  virtual TransportStats stats() const = 0;
  // Stops listening, closes every connection, joins threads. Idempotent; the destructor calls it.
  virtual void Shutdown() = 0;
};

}  // namespace rplasma::transport

#endif  // RPLASMA_MANAGER_TRANSPORT_TRANSPORT_H_
