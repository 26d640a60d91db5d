// Which ranks of a job share a host, and whether a host runs more ranks than it has cores. Each
// rank publishes "hostname cores" through the bootstrap; every rank reads all of them and so
// reaches the same answer, which settings that both ends of a channel must agree on (the eager
// limit) depend on.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "augur/status.h"

namespace augur::host {

struct HostShare {
  std::string host;
  unsigned cores = 1;
};

struct JobHosts {
  int local_ranks = 1;              // ranks on this rank's host, itself included
  bool here_oversubscribed = false;  // this host runs more ranks than it has cores
  bool any_oversubscribed = false;   // some host of the job does
};

// This machine's name for the entry: its hostname; when that is empty or unreadable (a container
// without one), "boot-" and the kernel's boot id, which is as unique per machine; else "localhost".
// Never empty, never with whitespace (the entry's separator). host_name_from() is the rule, given
// what gethostname and /proc/sys/kernel/random/boot_id said.
std::string this_host_name();
std::string host_name_from(std::string_view hostname, std::string_view boot_id);
// The name this rank groups by: the launcher's node name (PMIx) under the same rule, or
// this_host_name() when the launcher gave none or only blanks.
std::string node_name_from(std::string_view launcher_node);

// Empty when the launcher's count of ranks on this node (0: it gave none) agrees with the
// exchange's; else the warning to print (the exchange's count is used).
std::string placement_mismatch(int rank, std::string_view node, int launcher_local, int found_local);

// The bootstrap value: "hostname cores".
std::string encode_host_share(const HostShare& s);
// Rejects a malformed value (it comes from another process) with a message naming `rank`.
Result<HostShare> parse_host_share(std::string_view s, int rank);

// `shares[p]` is rank p's; `self` indexes this rank. A host's cores are the fewest any of its
// ranks reported (they agree unless their CPU sets differ).
JobHosts job_hosts(std::span<const HostShare> shares, int self);

}  // namespace augur::host
