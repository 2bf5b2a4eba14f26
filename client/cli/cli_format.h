// Text forms the rplasma CLI reads and prints: human-readable byte sizes and object ids.
//
// FormatSize: "512 B", "1.5 KiB", "12.0 MiB", "3.2 GiB", "1.0 TiB" (binary units, one decimal).
// Sizes the CLI reads (evict 1.5M) are ParseByteSize's, the syntax of every binary.
// ParseObjectId: 40 hex digits (either case).
// IndentJson: a JSON document re-laid out for reading, two spaces per level, one member per line
//             ({"a":[1,2]} becomes {\n  "a": [\n    1,\n    2\n  ]\n}); empty {} and [] stay
//             on one line. It only moves whitespace (outside strings), so it does not validate.
//
// Pure functions; thread-safe.
#ifndef RPLASMA_CLIENT_CLI_CLI_FORMAT_H_
#define RPLASMA_CLIENT_CLI_CLI_FORMAT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include "protocol/base/byte_size.h"  // ParseByteSize: sizes the CLI reads (evict 1.5M)
#include "protocol/base/object_id.h"

namespace rplasma::cli {

std::string FormatSize(uint64_t bytes);
absl::StatusOr<ObjectID> ParseObjectId(absl::string_view text);
std::string IndentJson(absl::string_view json);

}  // namespace rplasma::cli

#endif  // RPLASMA_CLIENT_CLI_CLI_FORMAT_H_
