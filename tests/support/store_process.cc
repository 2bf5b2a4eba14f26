#include "tests/support/store_process.h"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "protocol/frame.h"
#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"

namespace rplasma::testing {

absl::StatusOr<std::unique_ptr<StoreProcess>> StoreProcess::Start(StoreProcessOptions options) {
  std::unique_ptr<StoreProcess> store(new StoreProcess());
  store->socket_path_ = store->temp_.Join("store/store.sock");
  store->log_path_ = store->temp_.Join("store.log");
  std::vector<std::string> argv = {std::string(RPLASMA_BIN_DIR) + "/rplasma-store", "--socket",
                                   store->socket_path_, "--memory", absl::StrCat(options.memory)};
  argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
  ASSIGN_OR_RETURN(Subprocess process, Subprocess::Start(argv, store->log_path_));
  store->process_.emplace(std::move(process));

  const char* level = std::getenv("RPLASMA_LOG_LEVEL");
  const bool quiet = level != nullptr && std::atoi(level) > 0;
  // Generous: the store pre-faults its whole arena before it listens, which takes seconds under
  // sanitizers, in an emulated guest, or on a loaded CI machine.
  constexpr absl::Duration kStartTimeout = absl::Seconds(30);
  absl::Time deadline = absl::Now() + kStartTimeout;
  for (;;) {
    // Ready once it logged that it listens (after bind, listen and chmod). Not probed with a
    // connection: the store would still be closing it when a test measures its fd baseline.
    if (store->ReadLog().find(": listening on ") != std::string::npos) return store;
    // With INFO logs turned off (RPLASMA_LOG_LEVEL > 0) there is no such line: probe instead.
    if (quiet && UnixConnect(store->socket_path_).ok()) return store;
    if (!store->process_->running()) {
      return MakeError(ErrorCode::kUnavailable,
                       absl::StrCat("rplasma-store exited at start; log:\n", store->ReadLog()));
    }
    if (absl::Now() > deadline) {
      return MakeError(ErrorCode::kDeadlineExceeded,
                       absl::StrCat("rplasma-store did not listen within ", absl::FormatDuration(kStartTimeout), "; log:\n",
                                    store->ReadLog()));
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
}

StoreProcess::~StoreProcess() { Kill(); }

void StoreProcess::Kill() {
  if (process_) process_->Kill();
}

absl::StatusOr<int> StoreProcess::Stop(absl::Duration timeout) {
  if (!process_) return MakeError(ErrorCode::kInternal, "rplasma-store was never started");
  process_->Signal(SIGTERM);
  std::optional<int> status = process_->Wait(timeout);
  if (!status) {
    process_->Kill();
    return MakeError(ErrorCode::kDeadlineExceeded, "rplasma-store did not exit after SIGTERM");
  }
  return *status;
}

absl::Status StoreProcess::StopCleanly(absl::Duration timeout) {
  ASSIGN_OR_RETURN(int status, Stop(timeout));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  return MakeError(ErrorCode::kInternal, absl::StrCat("rplasma-store did not exit cleanly: wait status ", status));
}

int StoreProcess::OpenFdCount() const {
  pid_t pid = this->pid();
  if (pid <= 0) return -1;
  DIR* dir = ::opendir(absl::StrCat("/proc/", pid, "/fd").c_str());
  if (dir == nullptr) return -1;
  int count = 0;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] != '.') ++count;
  }
  ::closedir(dir);
  return count;
}

std::string StoreProcess::ReadLog() const {
  std::ifstream in(log_path_);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

absl::StatusOr<std::unique_ptr<RawStoreClient>> RawStoreClient::ConnectOnly(const std::string& socket_path) {
  std::unique_ptr<RawStoreClient> c(new RawStoreClient());
  ASSIGN_OR_RETURN(c->fd_, UnixConnect(socket_path));
  return c;
}

absl::StatusOr<std::unique_ptr<RawStoreClient>> RawStoreClient::Connect(const std::string& socket_path,
                                                                        const std::string& name) {
  ASSIGN_OR_RETURN(std::unique_ptr<RawStoreClient> c, ConnectOnly(socket_path));
  ASSIGN_OR_RETURN(uint64_t rid, c->Send(ConnectRequest{name}));
  // The arena fd rides on the first byte of the reply frame.
  char header[kFrameHeaderBytes];
  ASSIGN_OR_RETURN(ReceivedWithFd first, RecvWithFd(c->fd_.get(), header, sizeof(header)));
  if (first.bytes == 0) return MakeError(ErrorCode::kUnavailable, "connect: store closed the connection");
  if (!first.fd) return ProtocolError("connect: reply carried no arena fd");
  c->arena_fd_ = std::move(first.fd);
  RETURN_IF_ERROR(ReadAll(c->fd_.get(), header + first.bytes, sizeof(header) - first.bytes));
  ASSIGN_OR_RETURN(uint32_t length, ParseFrameHeader(header, kDefaultMaxFrameBytes));
  std::string payload(length, '\0');
  RETURN_IF_ERROR(ReadAll(c->fd_.get(), payload.data(), length));
  ASSIGN_OR_RETURN(Reply reply, DecodeReply(payload));
  RETURN_IF_ERROR(reply.status());
  if (reply.request_id != rid) return ProtocolError("connect: reply for another request");
  auto* connect = std::get_if<ConnectReply>(&reply.body);
  if (connect == nullptr) return ProtocolError("connect: reply is not a ConnectReply");
  c->connect_reply_ = *connect;
  return c;
}

absl::StatusOr<uint64_t> RawStoreClient::Send(RequestBody body) {
  Request request{next_request_id_++, std::move(body)};
  RETURN_IF_ERROR(WriteFrame(fd_.get(), EncodeRequest(request)));
  return request.request_id;
}

absl::StatusOr<Reply> RawStoreClient::Receive(absl::Duration timeout) {
  ASSIGN_OR_RETURN(std::string payload, ReadFrame(fd_.get(), kDefaultMaxFrameBytes, absl::Now() + timeout));
  return DecodeReply(payload);
}

absl::StatusOr<Reply> RawStoreClient::Call(RequestBody body, absl::Duration timeout) {
  ASSIGN_OR_RETURN(uint64_t rid, Send(std::move(body)));
  ASSIGN_OR_RETURN(Reply reply, Receive(timeout));
  if (reply.request_id != rid) {
    return ProtocolError(absl::StrCat("reply for request ", reply.request_id, ", expected ", rid));
  }
  return reply;
}

}  // namespace rplasma::testing
