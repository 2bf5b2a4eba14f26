// put, get, delete: moving one object's bytes between a file (or stdin/stdout) and the store.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

#include "client/cli/cli_format.h"
#include "client/cli/command.h"
#include "protocol/base/status.h"
#include "protocol/base/unique_fd.h"

namespace rplasma::cli {
namespace {

// Reads `fd` to EOF into `out`.
absl::Status ReadToEnd(int fd, const std::string& name, std::string* out) {
  char chunk[64 * 1024];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n == 0) return absl::OkStatus();
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("read", name, errno);
    }
    out->append(chunk, static_cast<size_t>(n));
  }
}

// Reads exactly out.size() bytes of `fd`; a file that shrank meanwhile is an error.
absl::Status ReadExactly(int fd, const std::string& name, absl::Span<uint8_t> out) {
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n == 0)
      return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("read(", name, "): file shrank while reading"));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("read", name, errno);
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status WriteFully(int fd, const std::string& name, absl::Span<const uint8_t> data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("write", name, errno);
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// put ID|--label L [FILE|-]
absl::Status RunPut(CliContext& context, absl::Span<const std::string> args) {
  ASSIGN_OR_RETURN(ObjectID id, TakeObjectId(args));
  if (args.size() > 1) return UsageError("too many arguments");
  const std::string path = args.empty() ? "-" : args[0];
  UniqueFd owned;
  int fd = STDIN_FILENO;
  if (path != "-") {
    owned.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!owned) return ErrnoError("open", path, errno);
    fd = owned.get();
  }
  const std::string name = path == "-" ? "stdin" : path;
  ASSIGN_OR_RETURN(Client * client, context.client());
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    // A regular file's size is known: read it straight into the new object (no extra copy).
    ASSIGN_OR_RETURN(CreatedObject object, client->Create(id, static_cast<uint64_t>(st.st_size)));
    absl::Status status = ReadExactly(fd, name, object.data);
    if (status.ok()) status = client->Seal(id);
    if (!status.ok()) {
      (void)client->Abort(id);
      return status;
    }
    RETURN_IF_ERROR(client->Release(id));
  } else {
    std::string bytes;
    RETURN_IF_ERROR(ReadToEnd(fd, name, &bytes));
    RETURN_IF_ERROR(client->Put(id, absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size())));
  }
  std::fprintf(context.out(), "%s\n", id.Hex().c_str());
  return absl::OkStatus();
}

// get ID|--label L [FILE|-] [--timeout MS]
absl::Status RunGet(CliContext& context, absl::Span<const std::string> args) {
  ASSIGN_OR_RETURN(ObjectID id, TakeObjectId(args));
  std::string path = "-";
  absl::Duration timeout = absl::ZeroDuration();
  bool have_path = false;
  while (!args.empty()) {
    if (args[0] == "--timeout") {
      int64_t ms = 0;
      if (args.size() < 2 || !absl::SimpleAtoi(args[1], &ms) || ms < 0)
        return UsageError("--timeout needs milliseconds");
      timeout = absl::Milliseconds(ms);
      args.remove_prefix(2);
    } else if (!have_path) {
      path = args[0];
      have_path = true;
      args.remove_prefix(1);
    } else {
      return UsageError("too many arguments");
    }
  }
  ASSIGN_OR_RETURN(Client * client, context.client());
  ASSIGN_OR_RETURN(ObjectBuffer buffer, client->GetOne(id, timeout));
  if (path == "-") {
    std::fflush(context.out());
    return WriteFully(::fileno(context.out()), "stdout", buffer.data());
  }
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd) return ErrnoError("open", path, errno);
  RETURN_IF_ERROR(WriteFully(fd.get(), path, buffer.data()));
  if (::close(fd.release()) != 0) return ErrnoError("close", path, errno);
  return absl::OkStatus();
}

// delete ID... (each ID may be --label L)
absl::Status RunDelete(CliContext& context, absl::Span<const std::string> args) {
  std::vector<ObjectID> ids;
  while (!args.empty()) {
    ASSIGN_OR_RETURN(ObjectID id, TakeObjectId(args));
    ids.push_back(id);
  }
  if (ids.empty()) return UsageError("missing object id");
  ASSIGN_OR_RETURN(Client * client, context.client());
  return client->Delete(ids);
}

}  // namespace

std::vector<Command> ObjectCommands() {
  return {
      {"put", "ID|--label L [FILE|-]", "store FILE (or stdin) as object ID; prints the id", RunPut},
      {"get", "ID|--label L [FILE|-] [--timeout MS]", "write object ID's data to FILE (or stdout)", RunGet},
      {"delete", "ID|--label L...", "delete objects (deferred while referenced)", RunDelete},
  };
}

}  // namespace rplasma::cli
