// rplasma::Client: an application's handle on the local store (and, for Fetch, the local manager).
//
// Connect maps the store's arena once; Create hands out a writable span inside it, Get hands out
// read-only ObjectBuffers pointing into it (zero copy). An ObjectBuffer releases its reference when
// destroyed, so the Client must outlive every ObjectBuffer it returned.
//
// Thread-safety: all methods may be called concurrently. Requests from several threads are in
// flight at once on the one store connection: the store answers a waiting Get later, out of order,
// and replies are matched to callers by request id, so a long Get never holds up other calls.
//
// Errors are absl::Status with an rplasma ErrorCode (protocol/base/status.h): ObjectExists,
// ObjectNotFound, ObjectNotSealed, ObjectAlreadySealed, ObjectInUse, OutOfMemory, DeadlineExceeded,
// NotCreator, Unavailable (store gone), ProtocolError.
#ifndef RPLASMA_CLIENT_CLIENT_H_
#define RPLASMA_CLIENT_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "client/created_object.h"
#include "client/manager_connection_pool.h"
#include "protocol/base/object_id.h"
#include "protocol/forced_protocol.h"
#include "protocol/store_messages.h"

namespace rplasma {

class Client;
class ClientConnection;    // client/client_connection.h: the socket, request ids, reply demux
class LocalIndex;          // client/local_index.h: gets with no IPC through the shared index
struct ManagerStatsReply;  // protocol/manager_messages.h

struct ClientOptions {
  std::string store_socket;            // required: rplasma-store --socket
  std::string manager_socket;          // optional: rplasma-manager --client-socket, for Fetch
  std::string client_name = "client";  // shown in store logs
  // Get() falls back to Fetch for ids the store does not have (needs manager_socket).
  bool get_fetches_remote = false;
  // Gets of sealed local objects go through the store's shared-memory index when it offers one:
  // no message, no wake-up of the store (client/local_index.h). Off: every get is a store request.
  bool get_without_ipc = true;
  // Deadlines: every call ends by one, whatever the store does (stopped, wedged, backlog full).
  // Connect: the connect(2) and the handshake together end within connect_timeout.
  absl::Duration connect_timeout = absl::Seconds(10);
  // A store request of a call that takes no timeout (Create, Seal, Put, Release, Stats, a Get
  // with timeout 0...) ends within io_timeout: kDeadlineExceeded, the connection stays usable
  // (InfiniteDuration: no deadline).
  absl::Duration io_timeout = absl::Seconds(30);
  // A Get with a timeout T > 0 ends within T + reply_grace (the time the store's answer needs to
  // arrive once T has passed). A reply that comes later is dropped and its references released.
  absl::Duration reply_grace = absl::Milliseconds(500);

  absl::Status Validate() const;
};

// A sealed object, read-only and zero-copy; holds one store reference until destroyed or Release().
// The reference is either counted by the store (taken and given back with a socket message) or
// held through one of the client's shared-memory slots (taken and given back with no message:
// info().ref_count is then 0). Move-only. Default-constructed / moved-from / failed entries are
// !valid().
class ObjectBuffer {
 public:
  ObjectBuffer() = default;
  ObjectBuffer(ObjectBuffer&& other) noexcept;
  ObjectBuffer& operator=(ObjectBuffer&& other) noexcept;
  ObjectBuffer(const ObjectBuffer&) = delete;
  ObjectBuffer& operator=(const ObjectBuffer&) = delete;
  ~ObjectBuffer();

  bool valid() const { return client_ != nullptr; }
  // OK for a valid buffer; for a Get entry that could not be served, why (NotFound, NotSealed...).
  const absl::Status& status() const { return status_; }
  const ObjectID& id() const { return info_.id; }
  absl::Span<const uint8_t> data() const { return {base_, info_.data_size}; }
  absl::Span<const uint8_t> metadata() const { return {base_ + info_.data_size, info_.metadata_size}; }
  const ObjectInfo& info() const { return info_; }  // offset, sizes, generation, checksum

  // Drops the reference now (idempotent). Errors only if the store is gone.
  absl::Status Release();

 private:
  friend class Client;
  static constexpr uint64_t kNoSlot = ~uint64_t{0};

  ObjectBuffer(Client* client, const uint8_t* base, const ObjectInfo& info)
      : client_(client), base_(base), info_(info) {}
  ObjectBuffer(Client* client, const uint8_t* base, const ObjectInfo& info, uint64_t index_entry, uint64_t slot)
      : client_(client), base_(base), info_(info), index_entry_(index_entry), slot_(slot) {}
  ObjectBuffer(const ObjectID& id, absl::Status status) : status_(std::move(status)) { info_.id = id; }

  Client* client_ = nullptr;
  const uint8_t* base_ = nullptr;
  ObjectInfo info_;
  absl::Status status_;
  // With a slot: the reference is held through it (released with no message).
  uint64_t index_entry_ = 0;
  uint64_t slot_ = kNoSlot;
};

// One object of Client::CreateMany: room for data_size bytes of data then metadata_size bytes of
// metadata. The caller writes both in place; the arena's bytes there are unspecified (not zeroed).
struct CreateSpec {
  ObjectID id;
  uint64_t data_size = 0;
  uint64_t metadata_size = 0;
};
// One object of Client::SealAndReleaseMany. REQUIRES: checksum == ObjectChecksum(data, metadata).
struct SealSpec {
  ObjectID id;
  uint64_t checksum = 0;
};
// One object of Client::PutInlineMany: views of the caller's bytes (read during the call only).
// REQUIRES: checksum == ObjectChecksum(data, metadata).
struct InlineObject {
  ObjectID id;
  absl::Span<const uint8_t> data;
  absl::Span<const uint8_t> metadata;
  uint64_t checksum = 0;
};

class Subscription;
class PendingReply;  // client/client_connection.h

// A Client::CreateMany whose first store request is on its way (Client::StartCreateMany) while
// its caller does something else on the same thread: a manager sends the request for the objects
// a peer is about to send, then calls the peer, then takes the answers, with no helper thread.
// Finish() returns exactly what CreateMany would have (a further request per max_ids_per_request
// objects is sent and waited for there, one at a time). Destroyed unfinished, it finishes and
// aborts every object it created. One owner thread; the Client stays usable by others meanwhile.
class PendingCreateMany {
 public:
  ~PendingCreateMany();
  PendingCreateMany(const PendingCreateMany&) = delete;
  PendingCreateMany& operator=(const PendingCreateMany&) = delete;

  // The answers (once: a second call is kInvalidArgument).
  absl::StatusOr<std::vector<absl::StatusOr<CreatedObject>>> Finish();

 private:
  friend class Client;
  PendingCreateMany(Client* client, absl::Span<const CreateSpec> objects, bool evict_if_full);
  // The part of to_send_ from `start` (at most max_ids_per_request objects).
  absl::Span<const size_t> Part(size_t start) const;
  absl::Status SendPart(size_t start, PendingReply* pending);
  // Takes the store's answer to the part from `start`; an outer error aborts what this created.
  absl::Status TakePart(size_t start, absl::StatusOr<Reply> reply);

  Client* const client_;
  const std::vector<CreateSpec> objects_;
  const bool evict_if_full_;
  std::vector<absl::StatusOr<CreatedObject>> results_;
  std::vector<size_t> to_send_;          // indices of the objects the store is asked for
  std::vector<ObjectID> created_here_;   // undone on an outer error
  std::unique_ptr<PendingReply> first_;  // the first part's answer slot
  absl::Status first_sent_;
  bool finished_ = false;
};

class Client {
 public:
  static absl::StatusOr<std::unique_ptr<Client>> Connect(const ClientOptions& options);
  ~Client();  // unmaps the arena; the store drops this client's refs and aborts its unsealed objects
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Creates `id` with room for data_size bytes of data and a copy of `metadata`. The caller holds a
  // reference until it seals (and releases) or aborts. With evict_if_full the store evicts
  // unreferenced sealed objects (LRU) to make room; else OutOfMemory.
  absl::StatusOr<CreatedObject> Create(const ObjectID& id, uint64_t data_size, absl::Span<const uint8_t> metadata = {},
                                       bool evict_if_full = true);
  // Makes `id` immutable and visible. Computes the checksum (XXH3-64 of data then metadata).
  // The creator keeps its reference: Release it when done writing.
  absl::Status Seal(const ObjectID& id);
  // Seal with a checksum the caller already holds — e.g. the manager, which has just verified the
  // fetched bytes against the owner's — saving a second pass over the object.
  // REQUIRES: checksum == ObjectChecksum(data, metadata) (client/checksum.h); the store trusts it.
  absl::Status Seal(const ObjectID& id, uint64_t checksum);
  // Seal(id, checksum) that also drops the creator's reference, in the same round trip. On error
  // the reference is kept (Abort the object).
  absl::Status SealAndRelease(const ObjectID& id, uint64_t checksum);
  // Discards an unsealed object this client created.
  absl::Status Abort(const ObjectID& id);
  // Creates, fills and seals `id` from `data` and `metadata`; the caller holds no reference after.
  // Up to kMaxInlinePutBytes in all: one round trip (the bytes travel in the request). Larger:
  // Create, then copy and checksum in one pass (from 4 MiB the checksum runs on a second thread
  // behind the copy), then SealAndRelease — two round trips.
  absl::Status Put(const ObjectID& id, absl::Span<const uint8_t> data, absl::Span<const uint8_t> metadata = {});
  // The one-round-trip Put with a checksum the caller already holds (e.g. verified fetched bytes).
  // REQUIRES: checksum == ObjectChecksum(data, metadata). InvalidArgument above kMaxInlinePutBytes.
  absl::Status PutInline(const ObjectID& id, absl::Span<const uint8_t> data, absl::Span<const uint8_t> metadata,
                         uint64_t checksum);

  // One ObjectBuffer per id, in order. Waits up to `timeout` for ids not yet sealed; entries still
  // missing then are !valid() with status ObjectNotFound / ObjectNotSealed. Duplicate ids are allowed
  // (each entry holds its own reference). Batches above the store's limit are split.
  // With get_fetches_remote, `hint_node` is passed on to Fetch for the ids fetched.
  absl::StatusOr<std::vector<ObjectBuffer>> Get(absl::Span<const ObjectID> ids,
                                                absl::Duration timeout = absl::ZeroDuration(),
                                                absl::string_view hint_node = {});
  // One id: the buffer, or the entry's error (DeadlineExceeded if it never became sealed in time).
  absl::StatusOr<ObjectBuffer> GetOne(const ObjectID& id, absl::Duration timeout = absl::ZeroDuration());
  // ---- Batches (client_batch.cc) ----
  // Each call sends as few store requests as the limits allow (max_ids_per_request objects each,
  // and for PutInlineMany frames kept under the frame cap), one after another, and returns one
  // result per object, in order. One object's failure (ObjectExists, OutOfMemory, NotCreator...)
  // never affects the others. The outer status fails only when the store cannot be asked (gone:
  // Unavailable; a malformed answer: ProtocolError).
  //
  // Create for each object, as Create(id, data_size, {}, evict_if_full) would (metadata: see
  // CreateSpec). Each CreatedObject lies inside the arena and is remembered for Seal/Abort, exactly
  // like Create's. On an outer error nothing this call created is left: those objects are aborted.
  absl::StatusOr<std::vector<absl::StatusOr<CreatedObject>>> CreateMany(absl::Span<const CreateSpec> objects,
                                                                        bool evict_if_full = true);
  // CreateMany with its first request sent now and its answers taken by Finish() (see
  // PendingCreateMany): the store creates while the caller does something else.
  std::unique_ptr<PendingCreateMany> StartCreateMany(absl::Span<const CreateSpec> objects, bool evict_if_full = true);
  // SealAndRelease(id, checksum) for each object (the checksum is trusted, as there). On an outer
  // error the objects of the requests already answered are sealed; the rest are untouched.
  absl::StatusOr<std::vector<absl::Status>> SealAndReleaseMany(absl::Span<const SealSpec> objects);
  // PutInline(id, data, metadata, checksum) for each object: an object above kMaxInlinePutBytes
  // gets InvalidArgument (and is not sent). On an outer error the objects of the requests already
  // answered are stored; the rest are not.
  absl::StatusOr<std::vector<absl::Status>> PutInlineMany(absl::Span<const InlineObject> objects);
  // SealAndReleaseMany and PutInlineMany without waiting for the store's answers (each object's
  // status is then OK, or its own InvalidArgument). The store handles this client's requests in
  // order, so every request this client sends afterwards finds them done, and the shared index
  // shows them once the store got to them. What the store refuses (a put finding the arena full,
  // a seal of an object deleted meanwhile) is not reported: the caller learns it by not finding
  // the object. The outer status fails only if the requests cannot be sent (the store gone).
  absl::StatusOr<std::vector<absl::Status>> SealAndReleaseManyDetached(absl::Span<const SealSpec> objects);
  absl::StatusOr<std::vector<absl::Status>> PutInlineManyDetached(absl::Span<const InlineObject> objects);
  // Drops the reference of every valid buffer, with one detached (no_reply) ReleaseRequest per
  // max_ids_per_request ids; every buffer is !valid() after. Errors only if the store is gone.
  absl::Status Release(absl::Span<ObjectBuffer> buffers);

  // Drops one reference taken by Create or Get (ObjectBuffer does this itself), whichever path the
  // Get took: one held through the shared index is given back with no message. References to one
  // object are alike: a buffer whose reference this dropped drops nothing more when it goes.
  absl::Status Release(const ObjectID& id);
  // Release without a round trip: the store answers nothing. It handles this client's requests in
  // order, so any later request of this client sees the reference gone. An error (the store gone)
  // shows up on this call or the next one; a release of a reference not held is ignored.
  absl::Status ReleaseDetached(const ObjectID& id);

  // True if `id` is present and sealed in the local store.
  absl::StatusOr<bool> Contains(const ObjectID& id);
  // True if the shared index shows `id` sealed, with no message; false when it does not (not
  // sealed, not indexed, no index): then only Contains can tell.
  bool IndexedAsSealed(const ObjectID& id) const;
  // Contains for each id, in order, in one request per max_ids_per_request ids.
  absl::StatusOr<std::vector<bool>> Contains(absl::Span<const ObjectID> ids);
  // Deletes each id; an object still referenced is deleted when its last reference goes.
  absl::Status Delete(absl::Span<const ObjectID> ids);
  // Evicts at least `bytes` of unreferenced sealed objects (LRU order), if there are that many.
  absl::StatusOr<EvictReply> Evict(uint64_t bytes);
  // Every object in the store (paged internally).
  absl::StatusOr<std::vector<ObjectInfo>> List();
  absl::StatusOr<StatsReply> Stats();
  // A separate connection that streams seal/delete/evict events (existing sealed objects first).
  absl::StatusOr<std::unique_ptr<Subscription>> Subscribe(bool include_existing = true);

  // Asks the local manager to bring `ids` from other nodes into this store (no-op for ids already
  // here). Needs options.manager_socket. Per-id failures are reported in the returned status.
  // `hint_node`: the node id (its manager's, see ManagerNodeId) that probably holds the ids, e.g.
  // the producer's. The manager tries it before asking the directory, for ids it has not fetched
  // before; a wrong hint costs one attempt, never the fetch. InvalidArgument if it is not a node id.
  // `protocol`: kNone lets the manager's --pin-threshold choose each transfer's peer protocol;
  // kGet or kPin makes the manager use that one (Get: the owner still pins what does not fit a
  // reply) and keeps these transfers out of its auto policy's estimates (for comparing the
  // protocols on one node, or pinning one down). Ids another fetch is already bringing come the
  // way that one goes.
  absl::Status Fetch(absl::Span<const ObjectID> ids, absl::Duration timeout, absl::string_view hint_node = {},
                     ForcedProtocol protocol = ForcedProtocol::kNone);
  // The local manager's stats document (JSON: counters, fetch timings, transport; see
  // docs/MANAGER.md). Needs options.manager_socket.
  absl::StatusOr<std::string> ManagerStats();
  // The local manager's node id: what a consumer elsewhere passes as Fetch's hint_node to reach
  // this node first. Needs options.manager_socket.
  absl::StatusOr<std::string> ManagerNodeId();

  // The arena as this process maps it (the manager registers it for RDMA).
  uint8_t* arena_base() const { return arena_base_; }
  uint64_t arena_size() const { return arena_size_; }
  const std::string& store_name() const { return store_name_; }

 private:
  friend class ObjectBuffer;
  friend class PendingCreateMany;
  Client(ClientOptions options, std::unique_ptr<ClientConnection> connection, uint8_t* arena_base, uint64_t arena_size,
         std::string store_name, uint32_t max_ids_per_request, std::unique_ptr<LocalIndex> local_index);

  // Waits until each of `ids` (fetched with caller_waits_for_seal: their seals sent to the store)
  // shows sealed in the shared index; those that do not within a moment are fetched again the
  // plain way (the manager answers once they are sealed, or with the store's error). One status
  // per id.
  std::vector<absl::Status> AwaitSealed(absl::Span<const ObjectID> ids, absl::Time deadline,
                                        absl::string_view hint_node, ForcedProtocol protocol);
  // One FetchRequest per kMaxFetchIds ids on a kept manager connection: each id's outcome as the
  // manager reports it.
  absl::StatusOr<std::vector<absl::Status>> FetchOnce(absl::Span<const ObjectID> ids, absl::Time deadline,
                                                      absl::string_view hint_node, ForcedProtocol protocol,
                                                      bool caller_waits_for_seal);
  // SealAndReleaseMany / PutInlineMany, each request sent detached (`detached`) or waited for.
  absl::StatusOr<std::vector<absl::Status>> SealAndReleaseManyImpl(absl::Span<const SealSpec> objects, bool detached);
  absl::StatusOr<std::vector<absl::Status>> PutInlineManyImpl(absl::Span<const InlineObject> objects, bool detached);
  // A ManagerStatsRequest and its reply (ManagerStats, ManagerNodeId).
  absl::StatusOr<ManagerStatsReply> AskManagerStats();
  // Get without the remote fallback.
  absl::StatusOr<std::vector<ObjectBuffer>> GetLocal(absl::Span<const ObjectID> ids, absl::Duration timeout);
  // GetLocal through the socket only.
  absl::StatusOr<std::vector<ObjectBuffer>> GetFromStore(absl::Span<const ObjectID> ids, absl::Duration timeout);
  // The sealed object `id` held through a slot, with no message; !valid() if the index cannot serve
  // it (not indexed or not sealed yet, slots full, being reclaimed, no index): use the socket.
  ObjectBuffer TryGetWithoutIpc(const ObjectID& id);
  // Gives back a reference held through a slot (ObjectBuffer::Release).
  void ReleaseSlot(uint64_t index_entry, uint64_t slot, uint64_t generation);
  // One Get reply entry as a buffer (or a failed entry); releases a reference it cannot use.
  ObjectBuffer ToBuffer(const ObjectID& expected, const ObjectInfo& info);
  // True if [offset, offset + size) lies inside the arena.
  bool InArena(uint64_t offset, uint64_t size) const;
  void ForgetCreated(const ObjectID& id);
  // After an outer CreateMany error: aborts (detached) and forgets what that call created.
  void AbortCreated(absl::Span<const ObjectID> ids);
  absl::Status SealWith(const ObjectID& id, uint64_t checksum, bool release);
  // Put's copy of `data` into `object` and the object's checksum, in one pass (small objects)
  // or with the hash on a second thread (large ones).
  static uint64_t CopyAndHash(const CreatedObject& object, absl::Span<const uint8_t> data);
  static uint64_t CopyAndHashInParallel(const CreatedObject& object, absl::Span<const uint8_t> data);

  const ClientOptions options_;
  const std::unique_ptr<ClientConnection> connection_;
  uint8_t* const arena_base_;
  const uint64_t arena_size_;
  const std::string store_name_;
  const uint32_t max_ids_per_request_;
  // Gets with no IPC (null when the store offers none). Its notices go out on connection_.
  const std::unique_ptr<LocalIndex> local_index_;

  absl::Mutex mu_;
  // Objects this client created and has not sealed or aborted yet, for Seal's checksum.
  absl::flat_hash_map<ObjectID, CreatedObject> created_ ABSL_GUARDED_BY(mu_);

  // Fetch's and ManagerStats' connections to the manager (kept between calls) and their request ids.
  static constexpr size_t kMaxIdleManagerConnections = 4;
  ManagerConnectionPool manager_connections_{options_.manager_socket, kMaxIdleManagerConnections};
  std::atomic<uint64_t> next_fetch_request_id_{0};
};

// A stream of store events on its own connection. Not thread-safe; one reader.
class Subscription {
 public:
  virtual ~Subscription() = default;
  // The next event; DeadlineExceeded if none arrives within `timeout`; Unavailable if the store went away.
  virtual absl::StatusOr<ObjectEvent> Next(absl::Duration timeout) = 0;
  // Readable when an event (or EOF) is pending, for poll/epoll users.
  virtual int fd() const = 0;
};

}  // namespace rplasma

#endif  // RPLASMA_CLIENT_CLIENT_H_
