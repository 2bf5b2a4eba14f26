// TransferBatch: moves many objects from one peer's manager into the local store in one round
// trip, whatever their sizes, and makes each visible only if it is exactly the owner's object.
//
//   one Call(FetchBatch{ids, inline_max, inline_budget}), and beside it (on a pool thread) the
//   objects of the sizes the caller expects created here with one store request (`expected`)
//   -> per id, as the owner chose by the object's true size: its description + bytes inline (at
//   most inline_max bytes, within the reply's budget), or a lease + RemoteRegion, or its error ->
//     inline: each checksum verified in the reply buffer; the smallest (or all, when they are
//             few bytes) stored sealed with one store request (PutSealedMany)
//     the rest: created with one store request (unless created early in the owner's shape);
//             inline bytes copied in, pinned ones read straight into place `reads_in_flight`
//             objects at a time (each chunk by chunk, checksummed as it lands: read_and_hash.h)
//             -> the verified ones sealed with one store request
//   (with seal_detached the store requests that make objects visible are not waited for)
//   -> one UnpinBatch for every lease, after the seal (a lost Unpin costs the owner a lease until
//      its TTL, never a wait here), or, with leave_leases, the leases handed back to the caller
//
// inline_max 0 moves every object with bytes by Pin + Read; ~0 inlines every object that fits.
//
// One object's failure fails that object only; objects created locally and not sealed are
// aborted, so nothing partial is ever visible. A Call that fails (peer gone, deadline) fails every
// object of the batch that was not sealed yet. Errors per object: the peer's error, transport
// errors, kStaleObject (checksum mismatch or a lapsed lease: peer_call.h), and the local store's
// (ObjectExists, OutOfMemory...). A single object is a batch of one: the same round trip.
//
// REQUIRES: 1..kMaxBatchIds ids (peer_messages.h); the caller splits larger fetches, and sizes
// batches so that what they pin fits the local store. Duplicate ids are the caller's to remove.
// Thread-safety: a free function; safe to run concurrently for different ids. Every thread it
// starts has finished when it returns.
#ifndef RPLASMA_MANAGER_PEER_BATCH_TRANSFER_H_
#define RPLASMA_MANAGER_PEER_BATCH_TRANSFER_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "manager/peer/local_store.h"
#include "manager/transport/transport.h"
#include "protocol/base/clock.h"
#include "protocol/base/object_id.h"
#include "protocol/base/worker_pool.h"
#include "protocol/object_description.h"

namespace rplasma::peer {

struct BatchTransferOptions {
  uint64_t read_chunk_bytes = 4u << 20;  // pinned: bytes per Read call
  int reads_in_flight = 4;               // pinned: objects read at once (each one chunk at a time)
  // Inline bytes one reply may carry (the owner pins what does not fit).
  uint64_t inline_budget_bytes = 8u << 20;
  // Inline objects up to this size are stored with PutSealedMany (their bytes travel to the store
  // in the request); larger ones are copied straight into objects created in place (two store
  // requests for all of them)...
  uint64_t inline_store_bytes = 512;
  // ...unless the batch's inline bytes total at most this: then PutSealedMany stores them all, each
  // up to the store's inline put limit, kMaxInlinePutBytes (one
  // PutBatch frame, or a few, sent without waiting when seal_detached, beats a CreateBatch waited
  // for and a SealBatch). Past ~128 KiB the bytes' copies through the socket and on the store's
  // one thread cost more than the round trip saved: 100 x 1 KiB warm 0.39 -> 0.35 ms with this
  // rule, while 256-id chunks of 1 KiB objects were slower by Put (2.04 -> 2.2 ms for 1000).
  uint64_t inline_store_total_bytes = 128u << 10;
  // Objects of expected sizes are created during the request (TransferBatch's `expected`) only in
  // a batch of at most this many expected bytes: there the store's round trip is a good part of
  // the transfer (256 x 1 KiB: the store phase ~390 -> ~55 us per batch), while a batch of
  // 256 x 16 KiB gains nothing (its time is the bytes': 1000 x 16 KiB warm 8.5-9.6 ms with early
  // creates against 8.7-9.8 ms without, alternating, once the request no longer took a helper
  // thread; with one it lost up to a tenth).
  uint64_t early_create_max_bytes = 1u << 20;
  // Threads for the reads (borrowed); nullptr: started for each batch (run_shared.h).
  WorkerPool* pool = nullptr;
  // The store requests that make the objects visible (PutSealedMany, the seal) are sent without
  // waiting for the store's answers (LocalStore's …Detached calls): the objects are then sealed
  // for every later request of this process, and for the clients reading the shared index once the
  // store got to them. A refusal by the store (the arena full) is not seen here: the object is
  // reported fetched and then not found.
  bool seal_detached = false;
  // The leases are left open, in the result's `leases`, for the caller to end (LeaseEnder, off the
  // fetch's path); false: one UnpinBatch ends them before TransferBatch returns.
  bool leave_leases = false;
};

struct BatchTransferResult {
  std::vector<absl::Status> statuses;      // one per id, in order
  std::vector<ObjectDescription> objects;  // the owner's description of each id (zero if unknown)
  uint64_t bytes = 0;                      // data + metadata of the objects sealed here
  uint64_t pinned_objects = 0;             // of those, the ones that came by Pin + Read (the rest inline)
  uint64_t pinned_bytes = 0;
  absl::Duration transfer;  // first request to last byte in place
  absl::Duration verify;    // checksums not overlapped with the transfer
  absl::Duration seal;      // the store requests that made them visible
  // Everything the caller waited for, first request to the last object sealed (and, unless
  // leave_leases, the Unpin round trip): what the threshold policy compares. Zero if the batch
  // failed as a whole.
  absl::Duration total;
  std::vector<uint64_t> leases;  // leave_leases: the leases still open, the caller's to end
};

// `expected`: what the caller believes each id is (the directory's or the location cache's
// description; a zero size: unknown), or empty. Objects of a known size that the reply would not
// put are created here while the request is on its way, so that the reply lands in place; one the
// owner describes otherwise (or fails) is aborted and the reply's own description is used.
BatchTransferResult TransferBatch(transport::Channel& channel, LocalStore& store, absl::Span<const ObjectID> ids,
                                  uint64_t inline_max, absl::Time deadline, const BatchTransferOptions& options,
                                  const Clock& clock, absl::Span<const ObjectDescription> expected = {});

}  // namespace rplasma::peer

#endif  // RPLASMA_MANAGER_PEER_BATCH_TRANSFER_H_
