#include "tests/support/network_namespace.h"

#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

#include "bench-mpi/launch/child_process.h"
#include "protocol/base/logging.h"
#include "protocol/base/status.h"

namespace rplasma::testing {
namespace {

constexpr char kTable[] = "inet rplasma";

// The tool from PATH, else /usr/sbin, else /sbin; "" if none has it.
std::string FindTool(const std::string& tool) {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) dirs = absl::StrSplit(path, ':', absl::SkipEmpty());
  dirs.push_back("/usr/sbin");
  dirs.push_back("/sbin");
  for (const std::string& dir : dirs) {
    const std::string candidate = dir + "/" + tool;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string Ip() { return FindTool("ip"); }
std::string NftBinary() { return FindTool("nft"); }
std::string TcBinary() { return FindTool("tc"); }

}  // namespace

std::string NetworkNamespaceUnavailableReason() {
  if (::geteuid() != 0) return "not root: network namespaces, veth pairs and nft rules need root";
  if (Ip().empty()) return "ip (package iproute2) not found in PATH, /usr/sbin or /sbin";
  if (NftBinary().empty()) return "nft (package nftables) not found in PATH, /usr/sbin or /sbin";
  return "";
}

absl::Status RunCommand(const std::vector<std::string>& argv) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  const std::string log = dir.Join("command.log");
  const std::string line = absl::StrJoin(argv, " ");
  ASSIGN_OR_RETURN(bench::ChildProcess process, bench::ChildProcess::Start(argv, log));
  const std::optional<int> status = process.Wait(absl::Seconds(10));
  if (status.has_value() && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) return absl::OkStatus();
  return MakeError(ErrorCode::kInternal,
                   absl::StrCat(line, ": ", status.has_value() ? absl::StrCat("wait status ", *status) : "timed out",
                                ": ", bench::ReadWholeFile(log)));
}

absl::StatusOr<std::unique_ptr<NetworkNamespace>> NetworkNamespace::Create(const std::string& name) {
  const std::string unavailable = NetworkNamespaceUnavailableReason();
  if (!unavailable.empty()) return MakeError(ErrorCode::kUnavailable, unavailable);
  RETURN_IF_ERROR(RunCommand({Ip(), "netns", "add", name}));
  // Owned from here: a failure below deletes the namespace again.
  std::unique_ptr<NetworkNamespace> ns(new NetworkNamespace(name));
  RETURN_IF_ERROR(RunCommand(ns->Exec({Ip(), "link", "set", "lo", "up"})));
  RETURN_IF_ERROR(ns->Nft(absl::StrCat("add table ", kTable)));
  RETURN_IF_ERROR(
      ns->Nft(absl::StrCat("add chain ", kTable, " input { type filter hook input priority 0 ; policy accept ; }")));
  RETURN_IF_ERROR(
      ns->Nft(absl::StrCat("add chain ", kTable, " output { type filter hook output priority 0 ; policy accept ; }")));
  return ns;
}

NetworkNamespace::~NetworkNamespace() {
  absl::Status deleted = RunCommand({Ip(), "netns", "delete", name_});
  if (!deleted.ok()) LOG(WARNING) << "network namespace " << name_ << " left behind: " << deleted;
}

std::vector<std::string> NetworkNamespace::Exec(const std::vector<std::string>& argv) const {
  std::vector<std::string> out = {Ip(), "netns", "exec", name_};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

absl::Status NetworkNamespace::Nft(const std::string& command) const {
  std::vector<std::string> argv = {NftBinary()};
  // nft joins its arguments with spaces; one argument per word keeps the shell out of it.
  for (absl::string_view word : absl::StrSplit(command, ' ', absl::SkipEmpty())) argv.emplace_back(word);
  return RunCommand(Exec(argv));
}

absl::Status NetworkNamespace::Tc(const std::string& command) const {
  const std::string tc = TcBinary();
  if (tc.empty()) return MakeError(ErrorCode::kUnavailable, "tc (package iproute2) not found");
  std::vector<std::string> argv = {tc};
  for (absl::string_view word : absl::StrSplit(command, ' ', absl::SkipEmpty())) argv.emplace_back(word);
  return RunCommand(Exec(argv));
}

absl::Status NetworkNamespace::FlushRules() const {
  RETURN_IF_ERROR(Nft(absl::StrCat("flush chain ", kTable, " input")));
  return Nft(absl::StrCat("flush chain ", kTable, " output"));
}

absl::StatusOr<std::unique_ptr<VethPair>> VethPair::Create(const std::string& name, const NetworkNamespace* ns_a,
                                                           const std::string& cidr_a, const NetworkNamespace* ns_b,
                                                           const std::string& cidr_b) {
  const std::string end_a = name + "a";
  const std::string end_b = name + "b";
  if (end_a.size() > 15) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("veth name ", end_a, " is longer than 15 bytes"));
  }
  RETURN_IF_ERROR(RunCommand({Ip(), "link", "add", end_a, "type", "veth", "peer", "name", end_b}));
  std::vector<std::string> delete_a = {Ip(), "link", "delete", end_a};
  std::unique_ptr<VethPair> pair(new VethPair(ns_a != nullptr ? ns_a->Exec(delete_a) : delete_a));
  const struct {
    const std::string& end;
    const NetworkNamespace* ns;
    const std::string& cidr;
  } ends[] = {{end_a, ns_a, cidr_a}, {end_b, ns_b, cidr_b}};
  for (const auto& e : ends) {
    auto in = [&](std::vector<std::string> argv) { return e.ns != nullptr ? e.ns->Exec(argv) : argv; };
    if (e.ns != nullptr) RETURN_IF_ERROR(RunCommand({Ip(), "link", "set", e.end, "netns", e.ns->name()}));
    RETURN_IF_ERROR(RunCommand(in({Ip(), "addr", "add", e.cidr, "dev", e.end})));
    RETURN_IF_ERROR(RunCommand(in({Ip(), "link", "set", e.end, "up"})));
  }
  return pair;
}

VethPair::~VethPair() {
  // Gone already if a namespace was deleted first (deleting one end deletes both): then this fails.
  (void)RunCommand(delete_argv_);
}

}  // namespace rplasma::testing
