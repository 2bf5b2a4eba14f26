// NetworkNamespace and VethPair: RAII owners of a network namespace (`ip netns add`) and of a veth
// pair, and nftables rules inside a namespace, for tests that inject real network faults (a full
// partition, random loss) between processes started inside namespaces. Root only; commands run
// through `ip` and `nft` (iproute2, nftables), each with its output in the error when it fails.
//
//   ASSIGN_OR_RETURN(auto a, NetworkNamespace::Create("rp-a-" + pid));
//   ASSIGN_OR_RETURN(auto b, NetworkNamespace::Create("rp-b-" + pid));
//   ASSIGN_OR_RETURN(auto link, VethPair::Create("rp-v" + pid, a.get(), "10.77.1.1/30", b.get(), "10.77.1.2/30"));
//   a->Exec({"/path/to/binary", ...})   // the argv that runs a command inside `a`
//   a->Nft("add rule inet rplasma input ip saddr 10.77.1.2 drop")
//   a->Tc("qdisc add dev rp-v1a root handle 1: htb default 20")
//
// Destruction deletes the namespace (and with it every interface and nft rule inside it), so a
// failing test leaves nothing behind; a process still running inside keeps only its own copy.
//
// Thread-safety: not thread-safe; use from the test's main thread.
#ifndef RPLASMA_TESTS_SUPPORT_NETWORK_NAMESPACE_H_
#define RPLASMA_TESTS_SUPPORT_NETWORK_NAMESPACE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rplasma::testing {

// Why this machine cannot run namespace tests ("not root", "nft not found ..."), or "" if it can.
std::string NetworkNamespaceUnavailableReason();

// Runs `argv` (argv[0] a path) to completion within 10 s; kInternal with its output if it fails.
absl::Status RunCommand(const std::vector<std::string>& argv);

class NetworkNamespace {
 public:
  // Adds namespace `name` with its loopback up and an empty nft table `inet rplasma` holding an
  // input and an output chain (hooks, policy accept) for the test's rules.
  static absl::StatusOr<std::unique_ptr<NetworkNamespace>> Create(const std::string& name);
  ~NetworkNamespace();  // ip netns delete (logs a failure; never throws)
  NetworkNamespace(const NetworkNamespace&) = delete;
  NetworkNamespace& operator=(const NetworkNamespace&) = delete;

  const std::string& name() const { return name_; }
  // {"ip", "netns", "exec", name, argv...}: the command line that runs `argv` inside.
  std::vector<std::string> Exec(const std::vector<std::string>& argv) const;
  // Runs `nft <command>` inside, e.g. "add rule inet rplasma input ip saddr 10.0.0.2 drop".
  absl::Status Nft(const std::string& command) const;
  // Runs `tc <command>` inside, e.g. "qdisc add dev veth0 root handle 1: htb default 20".
  absl::Status Tc(const std::string& command) const;
  // Removes every rule from the input and output chains of table inet rplasma.
  absl::Status FlushRules() const;

 private:
  explicit NetworkNamespace(std::string name) : name_(std::move(name)) {}
  const std::string name_;
};

// Two ends of a veth pair, each moved into a namespace (or left in this one: `ns` null) with an
// address ("10.77.1.1/30") and brought up; its ends are named `name` + "a" and + "b" (at most 15
// bytes). Destruction deletes the pair if it still exists (deleting either namespace already did).
class VethPair {
 public:
  static absl::StatusOr<std::unique_ptr<VethPair>> Create(const std::string& name, const NetworkNamespace* ns_a,
                                                          const std::string& cidr_a, const NetworkNamespace* ns_b,
                                                          const std::string& cidr_b);
  ~VethPair();
  VethPair(const VethPair&) = delete;
  VethPair& operator=(const VethPair&) = delete;

 private:
  explicit VethPair(std::vector<std::string> delete_argv) : delete_argv_(std::move(delete_argv)) {}
  const std::vector<std::string> delete_argv_;  // deletes end a, wherever it is
};

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_SUPPORT_NETWORK_NAMESPACE_H_
