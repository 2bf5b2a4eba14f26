// StoreServer: rplasma-store's event loop — the listening socket, every client session, the
// object table, waiting Gets and subscriptions, on one thread.
//
// One epoll instance watches the listening socket, a signalfd (SIGTERM/SIGINT: clean shutdown),
// an eventfd (Shutdown() from another thread) and every client socket (level-triggered). Waiting
// Gets' deadlines become the epoll_wait timeout. Sockets are non-blocking; a client stalled in
// the middle of a frame only holds its own buffer, and only for options.partial_frame_timeout;
// the bytes of incomplete frames across all clients are capped (options.max_partial_frame_bytes,
// the client buffering the most is dropped past it). Both end the connection with a log line. Replies are queued per
// client; a client whose queue passes options.pause_input_bytes is not read until it drains, and one past
// options.max_output_bytes (a subscriber that fell behind) is disconnected.
//
// Connections from another uid than the store's (SO_PEERCRED) are closed at accept. The first
// request must be Connect; its reply carries the arena fd, and the shared index's and the client's
// own reference slots' (store/shared_index.h) when the index is on. Bytes that fail framing or decoding
// get an error reply and the connection is closed; the store itself never stops on bad input.
//
// Thread-safety: Run() on one thread; Shutdown() and metrics() from any thread.
#ifndef RPLASMA_STORE_STORE_SERVER_H_
#define RPLASMA_STORE_STORE_SERVER_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "protocol/base/unique_fd.h"
#include "protocol/store_messages.h"
#include "store/arena.h"
#include "store/client_session.h"
#include "store/get_waiters.h"
#include "store/object_table.h"
#include "store/partial_frames.h"
#include "store/shared_index.h"
#include "store/store_metrics.h"
#include "store/store_options.h"

namespace rplasma {

class StoreServer {
 public:
  // Creates the arena, binds the socket (mode 0600, parent directory 0700 if created) and, with
  // options.handle_signals, blocks SIGTERM/SIGINT in the calling thread for the signalfd.
  static absl::StatusOr<std::unique_ptr<StoreServer>> Create(const StoreOptions& options);
  ~StoreServer();  // closes every connection and unlinks the socket
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;

  // Serves until SIGTERM/SIGINT or Shutdown(). Errors only if epoll itself fails.
  absl::Status Run();
  // Makes Run() return soon. Thread-safe.
  void Shutdown();

  uint64_t arena_size() const { return arena_->size(); }
  // Counters and the state as of the last loop iteration, for Prometheus (store_metrics.h).
  const StoreMetrics& metrics() const { return metrics_; }
  // The /metrics endpoint's port (options.metrics.port, or the one picked for it); 0 without one.
  uint16_t metrics_port() const { return metrics_exporter_ == nullptr ? 0 : metrics_exporter_->port(); }

 private:
  StoreServer(StoreOptions options, std::unique_ptr<Arena> arena, std::unique_ptr<SharedIndex> index);
  absl::Status Init();

  // ---- event loop (store_server.cc) ----
  void AcceptAll();
  void HandleSignal();
  void HandleClient(ClientId id, uint32_t events, absl::Time now);
  // Decodes and handles buffered frames until none is complete, input is paused or it is doomed.
  void ProcessFrames(ClientSession& s);
  void UpdateInterest(ClientSession& s);
  void MarkDirty(ClientSession& s) { dirty_.insert(s.id()); }
  void FlushDirty(absl::Time now);
  // After `s` read or handled input: records its partial frame and enforces the byte cap.
  void TrackPartialFrame(ClientSession& s, absl::Time now);
  // Dooms every client whose started frame is older than options.partial_frame_timeout.
  void ExpirePartialFrames(absl::Time now);
  // Closes `s` at the end of this iteration (after a last non-blocking flush).
  void Doom(ClientSession& s, const std::string& why);
  void CloseDoomed();
  void CloseSession(ClientId id);
  void SendReply(ClientSession& s, const Reply& reply, std::vector<int> fds_to_attach = {});
  ClientSession* FindSession(ClientId id);

  // ---- requests (store_server_requests.cc) ----
  void HandleRequest(ClientSession& s, Request request);
  void HandleConnect(ClientSession& s, uint64_t rid, const ConnectRequest& m);
  void HandleCreate(ClientSession& s, uint64_t rid, const CreateRequest& m);
  void HandleSeal(ClientSession& s, uint64_t rid, const SealRequest& m);
  void HandlePut(ClientSession& s, uint64_t rid, const PutRequest& m);
  void HandleCreateBatch(ClientSession& s, uint64_t rid, const CreateBatchRequest& m);
  void HandleSealBatch(ClientSession& s, uint64_t rid, const SealBatchRequest& m);
  void HandlePutBatch(ClientSession& s, uint64_t rid, const PutBatchRequest& m);
  // One object of a Seal or SealBatch: the seal, then with m.release the creator's reference.
  // *sealed tells whether the seal took (its Gets are then woken by the caller, after its reply).
  absl::Status SealObject(ClientSession& s, const SealRequest& m, bool* sealed);
  // One object of a Put or PutBatch: create, copy, seal, release (aborted if a later step fails).
  // The caller wakes the object's Gets after its reply.
  absl::StatusOr<ObjectInfo> PutObject(ClientSession& s, const PutRequest& m);
  // After `id` was sealed: completes the Gets that were waiting for it.
  void WakeGetsFor(const ObjectID& id);
  void HandleGet(ClientSession& s, uint64_t rid, const GetRequest& m);
  void HandleSubscribe(ClientSession& s, uint64_t rid, const SubscribeRequest& m);
  // The table's and allocator's figures, O(1); ref_count counts store references only.
  StatsReply Stats() const;
  // Stats() with `slot_references` references held through slots: counted into ref_count and
  // reported as slot_references (SharedIndex::SlotReferences, a scan, or the metrics' sample).
  StatsReply StatsWithSlots(uint64_t slot_references) const;
  // Answers a Get; unserved entries get ObjectNotFound / ObjectNotSealed.
  void CompleteGet(PendingGet get);
  void ExpireGets();
  // Table event -> every subscriber's queue.
  void OnEvent(EventKind kind, const ObjectInfo& info);
  // Queues the next page of existing sealed objects for a backfilling subscriber.
  void PumpBackfill(ClientSession& s);

  StoreOptions options_;
  StoreMetrics metrics_;
  std::unique_ptr<Arena> arena_;
  std::unique_ptr<SharedIndex> index_;  // null with --index-entries 0
  // The metrics' count of slot references: a scan at most every kSlotSampleInterval, on the loop.
  uint64_t slot_references_sample_ = 0;
  absl::Time slots_sampled_at_ = absl::InfinitePast();
  ObjectTable table_;
  GetWaiters waiters_;
  PartialFrames partial_frames_;
  uid_t uid_;
  UniqueFd listen_fd_;
  UniqueFd epoll_fd_;
  UniqueFd signal_fd_;
  UniqueFd wake_fd_;
  bool stopping_ = false;
  bool accept_paused_ = false;
  ClientId next_client_id_ = 16;  // below: the fixed epoll tags
  absl::flat_hash_map<ClientId, std::unique_ptr<ClientSession>> sessions_;
  absl::btree_set<ClientId> subscribers_;
  absl::btree_set<ClientId> dirty_;
  std::vector<ClientId> doomed_;
  // Last: its threads read metrics_ and are joined before anything else goes.
  std::unique_ptr<MetricsExporter> metrics_exporter_;
};

}  // namespace rplasma

#endif  // RPLASMA_STORE_STORE_SERVER_H_
