// Client: connection set-up, the arena mapping, and the write side of the object lifecycle
// (Create, Seal, Abort, Put, Release). Reads are in client_get.cc, batches in client_batch.cc, the
// rest in client_admin.cc.
#include "client/client.h"

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"

#include "client/background_hasher.h"
#include "client/checksum.h"
#include "client/client_connection.h"
#include "client/local_index.h"
#include "client/reply_body.h"
#include "protocol/base/logging.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"

namespace rplasma {
namespace {

using client_internal::ExpectBody;
using client_internal::ExpectCodes;

// Put's copy-and-hash step: small enough that a chunk is still in L2 when it is hashed.
constexpr size_t kPutChunkBytes = 64 * 1024;
// From this size Put hashes on a second thread (starting one costs tens of microseconds, about
// 1% of copying 4 MiB), told of the copy's progress every kParallelHashStepBytes.
constexpr size_t kBackgroundHashBytes = 4 << 20;
constexpr size_t kParallelHashStepBytes = 1 << 20;

// How long Connect waits for the store's ConnectReply.

absl::Status InvalidOption(absl::string_view message) {
  return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("client options: ", message));
}

}  // namespace

absl::Status ClientOptions::Validate() const {
  const size_t max_path = sizeof(sockaddr_un::sun_path) - 1;
  if (store_socket.empty()) return InvalidOption("store_socket is required");
  if (store_socket.size() > max_path) {
    return InvalidOption(absl::StrCat("store_socket longer than ", max_path, " bytes: ", store_socket));
  }
  if (manager_socket.size() > max_path) {
    return InvalidOption(absl::StrCat("manager_socket longer than ", max_path, " bytes: ", manager_socket));
  }
  if (client_name.size() > kMaxClientNameBytes) {
    return InvalidOption(absl::StrCat("client_name longer than ", kMaxClientNameBytes, " bytes"));
  }
  if (connect_timeout <= absl::ZeroDuration() || io_timeout <= absl::ZeroDuration() ||
      reply_grace < absl::ZeroDuration()) {
    return InvalidOption("connect_timeout and io_timeout must be > 0, reply_grace >= 0");
  }
  if (get_fetches_remote && manager_socket.empty()) {
    return InvalidOption("get_fetches_remote needs manager_socket");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(const ClientOptions& options) {
  RETURN_IF_ERROR(options.Validate());
  ASSIGN_OR_RETURN(ClientConnection::Handshake handshake,
                   ClientConnection::Connect(options.store_socket, options.client_name, options.connect_timeout,
                                             options.io_timeout, options.get_without_ipc));
  const uint64_t arena_size = handshake.reply.arena_size;
  const std::string& where = options.store_socket;
  if (arena_size == 0 || arena_size > kMaxObjectBytes) {
    return ProtocolError(absl::StrCat("connect(", where, "): implausible arena size ", arena_size));
  }
  // Mapping past the end of the file would turn a lying store into SIGBUS on first touch.
  struct stat st;
  if (::fstat(handshake.arena_fd.get(), &st) != 0) return ErrnoError("fstat", "arena fd", errno);
  if (static_cast<uint64_t>(st.st_size) < arena_size) {
    return ProtocolError(
        absl::StrCat("connect(", where, "): arena fd holds ", st.st_size, " bytes, store claims ", arena_size));
  }
  void* base = ::mmap(nullptr, arena_size, PROT_READ | PROT_WRITE, MAP_SHARED, handshake.arena_fd.get(), 0);
  if (base == MAP_FAILED) return ErrnoError("mmap", absl::StrCat("arena of ", arena_size, " bytes"), errno);
  // The mapping keeps the arena alive; the fd itself is no longer needed (closed by UniqueFd).
  uint32_t max_ids = handshake.reply.max_ids_per_request;
  if (max_ids == 0 || max_ids > kMaxIdsPerRequest) max_ids = kMaxIdsPerRequest;
  std::unique_ptr<LocalIndex> local_index;
  if (handshake.reply.index_entries != 0) {
    // The notice that a slot the store may wait for was cleared: no reply, in order with the
    // client's other requests. The connection outlives the index (members' order in Client).
    ClientConnection* connection = handshake.connection.get();
    absl::StatusOr<std::unique_ptr<LocalIndex>> opened =
        LocalIndex::Open(std::move(handshake.index_fd), handshake.reply.index_entries, std::move(handshake.slots_fd),
                         handshake.reply.slots, [connection] {
                           absl::Status sent = connection->SendNoReply(SlotsReleasedRequest{});
                           if (!sent.ok()) LOG(WARNING) << "store: slot release notice: " << sent;
                         });
    if (!opened.ok()) {
      ::munmap(base, arena_size);
      return ProtocolError(absl::StrCat("connect(", where, "): ", opened.status().message()));
    }
    local_index = *std::move(opened);
  }
  return std::unique_ptr<Client>(new Client(options, std::move(handshake.connection), static_cast<uint8_t*>(base),
                                            arena_size, std::move(handshake.reply.store_name), max_ids,
                                            std::move(local_index)));
}

Client::Client(ClientOptions options, std::unique_ptr<ClientConnection> connection, uint8_t* arena_base,
               uint64_t arena_size, std::string store_name, uint32_t max_ids_per_request,
               std::unique_ptr<LocalIndex> local_index)
    : options_(std::move(options)),
      connection_(std::move(connection)),
      arena_base_(arena_base),
      arena_size_(arena_size),
      store_name_(std::move(store_name)),
      max_ids_per_request_(max_ids_per_request),
      local_index_(std::move(local_index)) {}

Client::~Client() {
  // connection_ (declared before the arena fields) is closed by its own destructor after this
  // body; the store then drops our references. Unmapping first is safe: nothing here touches
  // the arena again.
  ::munmap(arena_base_, arena_size_);
}

bool Client::InArena(uint64_t offset, uint64_t size) const {
  return offset <= arena_size_ && size <= arena_size_ - offset;
}

absl::StatusOr<CreatedObject> Client::Create(const ObjectID& id, uint64_t data_size, absl::Span<const uint8_t> metadata,
                                             bool evict_if_full) {
  if (data_size > kMaxObjectBytes || metadata.size() > kMaxObjectBytes - data_size) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat("create(", id.Hex(), "): size ", data_size, "+", metadata.size(), " is too large"));
  }
  ASSIGN_OR_RETURN(CreateReply reply,
                   ExpectBody<CreateReply>(
                       connection_->Call(CreateRequest{id, data_size, metadata.size(), evict_if_full}), "create", id));
  if (!InArena(reply.offset, data_size + metadata.size())) {
    (void)connection_->SendDetached(AbortRequest{id});
    return ProtocolError(absl::StrCat("create(", id.Hex(), "): store placed the object outside the arena"));
  }
  uint8_t* data = arena_base_ + reply.offset;
  uint8_t* meta = data + data_size;
  if (!metadata.empty()) std::memcpy(meta, metadata.data(), metadata.size());
  const CreatedObject created{id, absl::MakeSpan(data, data_size), absl::MakeSpan(meta, metadata.size()), reply.offset,
                              reply.generation};
  {
    MutexLock lock(&mu_);
    created_[id] = created;
  }
  return created;
}

void Client::ForgetCreated(const ObjectID& id) {
  MutexLock lock(&mu_);
  created_.erase(id);
}

absl::Status Client::Seal(const ObjectID& id) {
  std::optional<CreatedObject> created;
  {
    MutexLock lock(&mu_);
    auto it = created_.find(id);
    if (it != created_.end()) created = it->second;
  }
  // Not created here: let the store say why (NotCreator, AlreadySealed, NotFound).
  uint64_t checksum = 0;
  if (created.has_value()) checksum = ObjectChecksum(created->data, created->metadata);
  return Seal(id, checksum);
}

absl::Status Client::Seal(const ObjectID& id, uint64_t checksum) { return SealWith(id, checksum, false); }

absl::Status Client::SealAndRelease(const ObjectID& id, uint64_t checksum) { return SealWith(id, checksum, true); }

absl::Status Client::SealWith(const ObjectID& id, uint64_t checksum, bool release) {
  absl::Status status =
      ExpectBody<EmptyReply>(connection_->Call(SealRequest{id, checksum, release}), "seal", id).status();
  ErrorCode code = ErrorCodeOf(status);
  if (code == ErrorCode::kOk || code == ErrorCode::kObjectAlreadySealed || code == ErrorCode::kObjectNotFound) {
    ForgetCreated(id);
  }
  return status;
}

absl::Status Client::Abort(const ObjectID& id) {
  absl::Status status = ExpectBody<EmptyReply>(connection_->Call(AbortRequest{id}), "abort", id.Hex()).status();
  ErrorCode code = ErrorCodeOf(status);
  if (code == ErrorCode::kOk || code == ErrorCode::kObjectAlreadySealed || code == ErrorCode::kObjectNotFound) {
    ForgetCreated(id);
  }
  return status;
}

absl::Status Client::Put(const ObjectID& id, absl::Span<const uint8_t> data, absl::Span<const uint8_t> metadata) {
  if (data.size() + metadata.size() <= kMaxInlinePutBytes) {
    return PutInline(id, data, metadata, ObjectChecksum(data, metadata));
  }
  ASSIGN_OR_RETURN(CreatedObject object, Create(id, data.size(), metadata));
  const uint64_t checksum =
      data.size() >= kBackgroundHashBytes ? CopyAndHashInParallel(object, data) : CopyAndHash(object, data);
  absl::Status sealed = SealAndRelease(id, checksum);
  if (!sealed.ok()) (void)Abort(id);
  return sealed;
}

uint64_t Client::CopyAndHash(const CreatedObject& object, absl::Span<const uint8_t> data) {
  // Each chunk is hashed right after its copy, while it is still in cache: one pass over the
  // object instead of a copy and then a second, cold pass at Seal.
  ChecksumBuilder checksum;
  for (size_t done = 0; done < data.size(); done += kPutChunkBytes) {
    const size_t n = std::min(kPutChunkBytes, data.size() - done);
    std::memcpy(object.data.data() + done, data.data() + done, n);
    checksum.Update(object.data.subspan(done, n));
  }
  checksum.Update(object.metadata);
  return checksum.Finish();
}

uint64_t Client::CopyAndHashInParallel(const CreatedObject& object, absl::Span<const uint8_t> data) {
  // Another core hashes what has been copied while this one copies the rest: the copy runs at
  // memory speed and the hash hides behind it. Metadata sits right after the data in the arena
  // (copied there by Create), so one contiguous hash covers both.
  BackgroundHasher hasher(object.data.data(), object.data.size() + object.metadata.size());
  for (size_t done = 0; done < data.size(); done += kParallelHashStepBytes) {
    const size_t n = std::min(kParallelHashStepBytes, data.size() - done);
    std::memcpy(object.data.data() + done, data.data() + done, n);
    hasher.Advance(done + n);
  }
  hasher.Advance(object.data.size() + object.metadata.size());
  return hasher.Finish();
}

absl::Status Client::PutInline(const ObjectID& id, absl::Span<const uint8_t> data, absl::Span<const uint8_t> metadata,
                               uint64_t checksum) {
  if (data.size() + metadata.size() > kMaxInlinePutBytes) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat("put(", id.Hex(), "): ", data.size(), "+", metadata.size(),
                                  " bytes exceed the inline limit of ", kMaxInlinePutBytes));
  }
  PutRequest request;
  request.id = id;
  request.data = data;
  request.metadata = metadata;
  request.checksum = checksum;
  return ExpectBody<CreateReply>(connection_->Call(std::move(request)), "put", id).status();
}

absl::Status Client::Release(const ObjectID& id) {
  if (local_index_ != nullptr && local_index_->ReleaseOne(id)) return absl::OkStatus();
  const std::string hex = id.Hex();
  ASSIGN_OR_RETURN(CodesReply codes, ExpectCodes(connection_->Call(ReleaseRequest{{id}}), 1, "release", hex));
  return client_internal::ObjectError(codes.codes[0], "release", hex);
}

absl::Status Client::ReleaseDetached(const ObjectID& id) {
  return connection_->SendNoReply(ReleaseRequest{{id}, /*no_reply=*/true});
}

}  // namespace rplasma
