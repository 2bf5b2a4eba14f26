// rplasma's error vocabulary on top of absl::Status.
//
// Every fallible function returns absl::Status or absl::StatusOr<T>. An rplasma-specific
// ErrorCode rides along as a status payload, so callers can tell ObjectNotSealed from
// ObjectInUse although both map to absl's FailedPrecondition. ErrorCode values are stable:
// they travel on the wire (protocol/store.fbs mirrors them) and scripts match their names.
//
// abseil 20220623 has no status macros; RETURN_IF_ERROR / ASSIGN_OR_RETURN use the newer
// names so a later abseil is a header swap.
#ifndef RPLASMA_PROTOCOL_BASE_STATUS_H_
#define RPLASMA_PROTOCOL_BASE_STATUS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rplasma {

enum class ErrorCode : uint16_t {
  kOk = 0,
  kObjectExists = 1,         // create of an id already present
  kObjectNotFound = 2,       // unknown id
  kObjectNotSealed = 3,      // operation needs a sealed object
  kObjectAlreadySealed = 4,  // seal/abort of a sealed object
  kObjectInUse = 5,          // operation needs an unreferenced object
  kOutOfMemory = 6,          // arena cannot hold the object even after eviction
  kDeadlineExceeded = 7,     // timeout expired
  kInvalidArgument = 8,      // malformed or out-of-range request
  kNotCreator = 9,           // seal/abort by a client that did not create the object
  kProtocolError = 10,       // bytes on a connection that are not a valid message
  kUnavailable = 11,         // peer, store, manager or Redis not reachable
  kInternal = 12,            // a bug; never caused by input
  kPermissionDenied = 13,    // authentication or credentials refused
  kStaleObject = 14,         // generation or checksum mismatch during fetch
};

// "ObjectNotFound", ...; "Unknown" for values outside the enum.
absl::string_view ErrorCodeName(ErrorCode code);

// A status carrying `code` (and the matching absl::StatusCode) with `message`.
absl::Status MakeError(ErrorCode code, absl::string_view message);

// The rplasma code of `status`: its payload if present, else derived from the absl code.
ErrorCode ErrorCodeOf(const absl::Status& status);

// Converts a wire value to ErrorCode; unknown values become kProtocolError.
ErrorCode ErrorCodeFromWire(uint16_t value);

// Shorthands for the most common errors.
inline absl::Status ObjectExistsError(absl::string_view m) { return MakeError(ErrorCode::kObjectExists, m); }
inline absl::Status ObjectNotFoundError(absl::string_view m) { return MakeError(ErrorCode::kObjectNotFound, m); }
inline absl::Status ObjectNotSealedError(absl::string_view m) { return MakeError(ErrorCode::kObjectNotSealed, m); }
inline absl::Status ObjectInUseError(absl::string_view m) { return MakeError(ErrorCode::kObjectInUse, m); }
inline absl::Status OutOfMemoryError(absl::string_view m) { return MakeError(ErrorCode::kOutOfMemory, m); }
inline absl::Status ProtocolError(absl::string_view m) { return MakeError(ErrorCode::kProtocolError, m); }

// "op(object): strerror(errno)" as the absl code that fits errno.
absl::Status ErrnoError(absl::string_view op, absl::string_view object, int err);

}  // namespace rplasma

#define RPLASMA_STATUS_CONCAT_INNER_(a, b) a##b
#define RPLASMA_STATUS_CONCAT_(a, b) RPLASMA_STATUS_CONCAT_INNER_(a, b)

#define RETURN_IF_ERROR(expr)                          \
  do {                                                 \
    ::absl::Status rplasma_status_ = (expr);           \
    if (!rplasma_status_.ok()) return rplasma_status_; \
  } while (0)

#define ASSIGN_OR_RETURN(lhs, expr) \
  RPLASMA_ASSIGN_OR_RETURN_IMPL_(RPLASMA_STATUS_CONCAT_(rplasma_statusor_, __LINE__), lhs, expr)

#define RPLASMA_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                   \
  if (!statusor.ok()) return std::move(statusor).status();  \
  lhs = std::move(statusor).value()

#endif  // RPLASMA_PROTOCOL_BASE_STATUS_H_
