// VerbsVethLink: inside the Soft-RoCE guest, two rxe devices joined by a veth pair so that RoCE
// traffic between two processes on the one machine really crosses a netdev, where `tc netem` can
// delay and drop it. For tests labelled rdma-guest (root, iproute2, sch_netem, rdma_rxe).
//
// Why not the guest's rxe0: rxe delivers traffic to its own address internally (no netdev, no
// qdisc), and the kernel routes traffic between two local addresses over `lo` (rxe drops what
// arrives there). Network namespaces do not help: the guest kernel's rxe (6.1) has its UDP socket
// in the initial namespace only. So: side A (10.78.0.1 on rplasma-va, rxe rplasma_ra) and side B
// (10.78.0.2 on rplasma-vb, rxe rplasma_rb), and policy routing that sends locally generated
// packets for the other side out of the own veth end (rules before the `local` table, which moves
// from preference 0 to 100), with accept_local and no rp_filter so the other end accepts a local
// source address. Lookups that name the outgoing device get the same routes (rules on `oif`):
// rdma_cm on the passive side accepts a CONNECT_REQUEST only if a lookup of the requester's address
// with the receiving netdev as oif resolves to that netdev (cma.c validate_ipv4_net_dev); without
// them it rejects every request (REJ, consumer-defined reason 28) before any listener sees it.
// Processes pick their side by address: listen on ip_a()/ip_b() and name the
// device (`--rdma_device`), since each rxe device has its own memory registrations.
//
// Create() removes leftovers of an earlier run first; destruction removes the qdiscs, devices and
// rules and restores the `local` rule. Not thread-safe; one per guest at a time.
#ifndef RPLASMA_TESTS_INTEGRATION_VERBS_VETH_LINK_H_
#define RPLASMA_TESTS_INTEGRATION_VERBS_VETH_LINK_H_

#include <sys/wait.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

#include "bench-mpi/launch/child_process.h"
#include "protocol/base/status.h"

namespace rplasma::testing {

class VerbsVethLink {
 public:
  static constexpr const char* kIpTool = "/usr/sbin/ip";
  static constexpr const char* kTcTool = "/usr/sbin/tc";
  static constexpr const char* kRdmaTool = "/usr/bin/rdma";

  // kUnavailable naming the step that failed (not root, no veth or rdma_rxe, no iproute2).
  static absl::StatusOr<std::unique_ptr<VerbsVethLink>> Create(const std::string& log_path) {
    std::unique_ptr<VerbsVethLink> link(new VerbsVethLink(log_path));
    link->RemoveAll();
    const std::vector<std::vector<std::string>> steps = {
        {kIpTool, "link", "add", kNetdevA, "type", "veth", "peer", "name", kNetdevB},
        {kIpTool, "addr", "add", absl::StrCat(kIpA, "/32"), "dev", kNetdevA},
        {kIpTool, "addr", "add", absl::StrCat(kIpB, "/32"), "dev", kNetdevB},
        {kIpTool, "link", "set", kNetdevA, "up"},
        {kIpTool, "link", "set", kNetdevB, "up"},
        {kIpTool, "route", "add", kIpB, "dev", kNetdevA, "src", kIpA, "table", kTableA},
        {kIpTool, "route", "add", kIpA, "dev", kNetdevB, "src", kIpB, "table", kTableB},
        {kIpTool, "rule", "add", "pref", "100", "lookup", "local"},
        {kIpTool, "rule", "del", "pref", "0"},
        {kIpTool, "rule", "add", "pref", "10", "iif", "lo", "to", kIpB, "lookup", kTableA},
        {kIpTool, "rule", "add", "pref", "11", "iif", "lo", "to", kIpA, "lookup", kTableB},
        {kIpTool, "rule", "add", "pref", "12", "oif", kNetdevA, "to", kIpB, "lookup", kTableA},
        {kIpTool, "rule", "add", "pref", "13", "oif", kNetdevB, "to", kIpA, "lookup", kTableB},
        {kRdmaTool, "link", "add", kDeviceA, "type", "rxe", "netdev", kNetdevA},
        {kRdmaTool, "link", "add", kDeviceB, "type", "rxe", "netdev", kNetdevB},
    };
    RETURN_IF_ERROR(link->WriteSysctl("all/rp_filter", "0"));
    RETURN_IF_ERROR(link->WriteSysctl("default/rp_filter", "0"));
    RETURN_IF_ERROR(link->WriteSysctl("all/accept_local", "1"));
    for (size_t i = 0; i < steps.size(); ++i) {
      RETURN_IF_ERROR(link->Run(steps[i]));
      if (i == 4) {  // both ends exist
        for (const char* dev : {kNetdevA, kNetdevB}) {
          RETURN_IF_ERROR(link->WriteSysctl(absl::StrCat(dev, "/rp_filter"), "0"));
          RETURN_IF_ERROR(link->WriteSysctl(absl::StrCat(dev, "/accept_local"), "1"));
        }
      }
      if (i == 8) link->local_rule_moved_ = true;
    }
    return link;
  }

  ~VerbsVethLink() { RemoveAll(); }

  static constexpr const char* ip_a() { return kIpA; }
  static constexpr const char* ip_b() { return kIpB; }
  static constexpr const char* device_a() { return kDeviceA; }
  static constexpr const char* device_b() { return kDeviceB; }

  // `tc qdisc replace ... root netem <args>` on both veth ends (each direction gets it once).
  absl::Status SetNetem(const std::vector<std::string>& netem_args) {
    for (const char* dev : {kNetdevA, kNetdevB}) {
      std::vector<std::string> argv = {kTcTool, "qdisc", "replace", "dev", dev, "root", "netem"};
      argv.insert(argv.end(), netem_args.begin(), netem_args.end());
      RETURN_IF_ERROR(Run(argv));
    }
    return absl::OkStatus();
  }
  absl::Status ClearNetem() {
    for (const char* dev : {kNetdevA, kNetdevB}) RETURN_IF_ERROR(Run({kTcTool, "qdisc", "del", "dev", dev, "root"}));
    return absl::OkStatus();
  }

  // Bytes side A's veth end has sent (/sys/class/net/<dev>/statistics/tx_bytes); 0 if unreadable.
  static uint64_t TxBytesA() {
    std::ifstream in(absl::StrCat("/sys/class/net/", kNetdevA, "/statistics/tx_bytes"));
    uint64_t bytes = 0;
    in >> bytes;
    return bytes;
  }

 private:
  static constexpr const char* kNetdevA = "rplasma-va";
  static constexpr const char* kNetdevB = "rplasma-vb";
  static constexpr const char* kDeviceA = "rplasma_ra";
  static constexpr const char* kDeviceB = "rplasma_rb";
  static constexpr const char* kIpA = "10.78.0.1";
  static constexpr const char* kIpB = "10.78.0.2";
  static constexpr const char* kTableA = "178";
  static constexpr const char* kTableB = "179";

  explicit VerbsVethLink(std::string log_path) : log_path_(std::move(log_path)) {}

  // Runs a tool to completion; kUnavailable with its output when it fails.
  absl::Status Run(const std::vector<std::string>& argv) {
    absl::StatusOr<bench::ChildProcess> child = bench::ChildProcess::Start(argv, log_path_);
    if (!child.ok())
      return absl::UnavailableError(absl::StrCat(absl::StrJoin(argv, " "), ": ", child.status().message()));
    std::optional<int> status = child->Wait(absl::Seconds(30));
    if (!status.has_value() || !WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
      return absl::UnavailableError(
          absl::StrCat(absl::StrJoin(argv, " "), " failed: ", bench::FileTail(log_path_, 400)));
    }
    return absl::OkStatus();
  }

  // Sets /proc/sys/net/ipv4/conf/<name>. The `all` values stay changed: the guest is thrown away
  // after its run, and loopback traffic on rxe0 does not care.
  absl::Status WriteSysctl(const std::string& name, const std::string& value) {
    const std::string path = absl::StrCat("/proc/sys/net/ipv4/conf/", name);
    std::ofstream out(path);
    out << value;
    out.close();
    if (!out) return absl::UnavailableError(absl::StrCat("write ", path, ": failed (not root?)"));
    return absl::OkStatus();
  }

  // Best effort: whatever an earlier (crashed) run or this one left. Errors are expected here.
  void RemoveAll() {
    auto quiet = [this](const std::vector<std::string>& argv) { (void)Run(argv); };
    quiet({kRdmaTool, "link", "delete", kDeviceA});
    quiet({kRdmaTool, "link", "delete", kDeviceB});
    quiet({kIpTool, "link", "del", kNetdevA});  // takes its peer and both qdiscs
    quiet({kIpTool, "rule", "del", "pref", "10"});
    quiet({kIpTool, "rule", "del", "pref", "11"});
    quiet({kIpTool, "rule", "del", "pref", "12"});
    quiet({kIpTool, "rule", "del", "pref", "13"});
    if (local_rule_moved_ || LocalRuleMoved()) {
      quiet({kIpTool, "rule", "add", "pref", "0", "lookup", "local"});
      quiet({kIpTool, "rule", "del", "pref", "100"});
    }
    local_rule_moved_ = false;
  }

  // True if `ip rule` lists the local table at preference 100 (an earlier run moved it).
  bool LocalRuleMoved() {
    const std::string out = absl::StrCat(log_path_, ".rules");
    absl::StatusOr<bench::ChildProcess> child = bench::ChildProcess::Start({kIpTool, "rule", "show"}, out);
    if (!child.ok() || !child->Wait(absl::Seconds(30)).has_value()) return false;
    return bench::ReadWholeFile(out).find("100:\tfrom all lookup local") != std::string::npos;
  }

  const std::string log_path_;
  bool local_rule_moved_ = false;
};

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_INTEGRATION_VERBS_VETH_LINK_H_
