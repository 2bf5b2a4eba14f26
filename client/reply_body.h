// ExpectBody<T>: turns a store reply into its body of type T, or into a status — the reply's own
// error (with the operation and object named), a broken connection, or kProtocolError when the
// store answered with some other body type. Private to the client library.
#ifndef RPLASMA_CLIENT_REPLY_BODY_H_
#define RPLASMA_CLIENT_REPLY_BODY_H_

#include <string>
#include <utility>
#include <variant>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#include "protocol/base/object_id.h"
#include "protocol/base/status.h"
#include "protocol/store_messages.h"

namespace rplasma::client_internal {

// `status` with its message prefixed by "op(object): " unless it already names the object.
inline absl::Status Annotate(const absl::Status& status, absl::string_view op, absl::string_view object) {
  if (status.ok()) return status;
  std::string prefix = object.empty() ? std::string(op) : absl::StrCat(op, "(", object, ")");
  if (absl::StrContains(status.message(), prefix) || (!object.empty() && absl::StrContains(status.message(), object))) {
    return status;
  }
  absl::string_view message = status.message();
  if (message.empty()) message = ErrorCodeName(ErrorCodeOf(status));
  return MakeError(ErrorCodeOf(status), absl::StrCat(prefix, ": ", message));
}

// A per-object code as a short human phrase ("no such object", ...).
inline absl::string_view DescribeCode(ErrorCode code) {
  switch (code) {
    case ErrorCode::kObjectNotFound: return "no such object";
    case ErrorCode::kObjectNotSealed: return "object not sealed yet";
    case ErrorCode::kObjectExists: return "object already exists";
    case ErrorCode::kObjectAlreadySealed: return "object already sealed";
    case ErrorCode::kObjectInUse: return "object in use";
    case ErrorCode::kNotCreator: return "not created by this client";
    default: return ErrorCodeName(code);
  }
}

// The status for per-object `code` of operation `op` on `id_hex`.
inline absl::Status ObjectError(ErrorCode code, absl::string_view op, absl::string_view id_hex) {
  return MakeError(code, absl::StrCat(op, "(", id_hex, "): ", DescribeCode(code)));
}

template <typename T>
absl::StatusOr<T> ExpectBody(absl::StatusOr<Reply> reply, absl::string_view op, absl::string_view object = "") {
  if (!reply.ok()) return Annotate(reply.status(), op, object);
  if (reply->error != ErrorCode::kOk) return Annotate(reply->status(), op, object);
  T* body = std::get_if<T>(&reply->body);
  if (body == nullptr) {
    return Annotate(ProtocolError("store answered with an unexpected reply type"), op, object);
  }
  return std::move(*body);
}

// The same, naming object `id`; its hex form is built only on the error path.
template <typename T>
absl::StatusOr<T> ExpectBody(absl::StatusOr<Reply> reply, absl::string_view op, const ObjectID& id) {
  if (reply.ok() && reply->error == ErrorCode::kOk) {
    if (T* body = std::get_if<T>(&reply->body)) return std::move(*body);
  }
  return ExpectBody<T>(std::move(reply), op, id.Hex());
}

// For per-id answers (Release, Contains, Delete): exactly `count` codes.
inline absl::StatusOr<CodesReply> ExpectCodes(absl::StatusOr<Reply> reply, size_t count, absl::string_view op,
                                              absl::string_view object = "") {
  ASSIGN_OR_RETURN(CodesReply codes, ExpectBody<CodesReply>(std::move(reply), op, object));
  if (codes.codes.size() != count) {
    return Annotate(ProtocolError(absl::StrCat("store answered ", codes.codes.size(), " codes for ", count, " ids")),
                    op, object);
  }
  return codes;
}

}  // namespace rplasma::client_internal

#endif  // RPLASMA_CLIENT_REPLY_BODY_H_
