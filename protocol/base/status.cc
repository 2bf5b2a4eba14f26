#include "protocol/base/status.h"

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace rplasma {
namespace {

constexpr char kPayloadUrl[] = "rplasma/error_code";

absl::StatusCode AbslCodeFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return absl::StatusCode::kOk;
    case ErrorCode::kObjectExists: return absl::StatusCode::kAlreadyExists;
    case ErrorCode::kObjectNotFound: return absl::StatusCode::kNotFound;
    case ErrorCode::kObjectNotSealed:
    case ErrorCode::kObjectAlreadySealed:
    case ErrorCode::kObjectInUse: return absl::StatusCode::kFailedPrecondition;
    case ErrorCode::kOutOfMemory: return absl::StatusCode::kResourceExhausted;
    case ErrorCode::kDeadlineExceeded: return absl::StatusCode::kDeadlineExceeded;
    case ErrorCode::kInvalidArgument: return absl::StatusCode::kInvalidArgument;
    case ErrorCode::kNotCreator:
    case ErrorCode::kPermissionDenied: return absl::StatusCode::kPermissionDenied;
    case ErrorCode::kProtocolError: return absl::StatusCode::kDataLoss;
    case ErrorCode::kUnavailable: return absl::StatusCode::kUnavailable;
    case ErrorCode::kStaleObject: return absl::StatusCode::kAborted;
    case ErrorCode::kInternal: return absl::StatusCode::kInternal;
  }
  return absl::StatusCode::kUnknown;
}

}  // namespace

absl::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "OK";
    case ErrorCode::kObjectExists: return "ObjectExists";
    case ErrorCode::kObjectNotFound: return "ObjectNotFound";
    case ErrorCode::kObjectNotSealed: return "ObjectNotSealed";
    case ErrorCode::kObjectAlreadySealed: return "ObjectAlreadySealed";
    case ErrorCode::kObjectInUse: return "ObjectInUse";
    case ErrorCode::kOutOfMemory: return "OutOfMemory";
    case ErrorCode::kDeadlineExceeded: return "DeadlineExceeded";
    case ErrorCode::kInvalidArgument: return "InvalidArgument";
    case ErrorCode::kNotCreator: return "NotCreator";
    case ErrorCode::kProtocolError: return "ProtocolError";
    case ErrorCode::kUnavailable: return "Unavailable";
    case ErrorCode::kInternal: return "Internal";
    case ErrorCode::kPermissionDenied: return "PermissionDenied";
    case ErrorCode::kStaleObject: return "StaleObject";
  }
  return "Unknown";
}

absl::Status MakeError(ErrorCode code, absl::string_view message) {
  if (code == ErrorCode::kOk) return absl::OkStatus();
  absl::Status status(AbslCodeFor(code), message);
  status.SetPayload(kPayloadUrl, absl::Cord(absl::StrCat(static_cast<int>(code))));
  return status;
}

ErrorCode ErrorCodeFromWire(uint16_t value) {
  if (value > static_cast<uint16_t>(ErrorCode::kStaleObject)) return ErrorCode::kProtocolError;
  return static_cast<ErrorCode>(value);
}

ErrorCode ErrorCodeOf(const absl::Status& status) {
  if (status.ok()) return ErrorCode::kOk;
  if (auto payload = status.GetPayload(kPayloadUrl)) {
    int value = 0;
    if (absl::SimpleAtoi(std::string(*payload), &value) && value >= 0 && value <= 0xffff) {
      return ErrorCodeFromWire(static_cast<uint16_t>(value));
    }
  }
  switch (status.code()) {
    case absl::StatusCode::kAlreadyExists: return ErrorCode::kObjectExists;
    case absl::StatusCode::kNotFound: return ErrorCode::kObjectNotFound;
    case absl::StatusCode::kResourceExhausted: return ErrorCode::kOutOfMemory;
    case absl::StatusCode::kDeadlineExceeded: return ErrorCode::kDeadlineExceeded;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange: return ErrorCode::kInvalidArgument;
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated: return ErrorCode::kPermissionDenied;
    case absl::StatusCode::kDataLoss: return ErrorCode::kProtocolError;
    case absl::StatusCode::kUnavailable: return ErrorCode::kUnavailable;
    case absl::StatusCode::kAborted: return ErrorCode::kStaleObject;
    default: return ErrorCode::kInternal;
  }
}

absl::Status ErrnoError(absl::string_view op, absl::string_view object, int err) {
  std::string message = absl::StrCat(op, "(", object, "): ", std::strerror(err));
  switch (err) {
    case ENOENT: return absl::NotFoundError(message);
    case EACCES:
    case EPERM: return absl::PermissionDeniedError(message);
    case EEXIST: return absl::AlreadyExistsError(message);
    case ENOMEM:
    case ENOSPC:
    case EMFILE:
    case ENFILE: return absl::ResourceExhaustedError(message);
    case EINVAL: return absl::InvalidArgumentError(message);
    case ETIMEDOUT: return absl::DeadlineExceededError(message);
    case ECONNREFUSED:
    case ECONNRESET:
    case EPIPE:
    case ENOTCONN:
    case EHOSTUNREACH:
    case ENETUNREACH: return absl::UnavailableError(message);
    default: return absl::InternalError(message);
  }
}

}  // namespace rplasma
