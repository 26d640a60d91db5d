// Which ranks share a host (host/augur/host/job_hosts.h).

#include "augur/host/job_hosts.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <map>
#include <utility>

namespace augur::host {

namespace {
std::string clean(std::string_view v) {
  std::string s(v);
  std::erase_if(s, [](unsigned char c) { return std::isspace(c) != 0 || c == 0; });
  return s;
}
}  // namespace

std::string host_name_from(std::string_view hostname, std::string_view boot_id) {
  if (std::string h = clean(hostname); !h.empty()) return h;
  if (std::string id = clean(boot_id); !id.empty()) return "boot-" + id;
  return "localhost";
}

std::string this_host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) name[0] = '\0';
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return host_name_from(name, id);
}

std::string node_name_from(std::string_view launcher_node) {
  if (std::string n = clean(launcher_node); !n.empty()) return n;
  return this_host_name();
}

std::string placement_mismatch(int rank, std::string_view node, int launcher_local, int found_local) {
  if (launcher_local <= 0 || launcher_local == found_local) return {};
  return "augur: rank " + std::to_string(rank) + ": the launcher put " + std::to_string(launcher_local) +
         " ranks on node " + std::string(node) + ", the exchange found " + std::to_string(found_local) +
         " there; using " + std::to_string(found_local);
}

std::string encode_host_share(const HostShare& s) { return s.host + " " + std::to_string(s.cores); }

Result<HostShare> parse_host_share(std::string_view s, int rank) {
  auto bad = [&](const char* why) {
    return Status(Code::kProtocol, "rank " + std::to_string(rank) + " published a malformed host entry (" + why +
                                       "): \"" + std::string(s.substr(0, 80)) + "\"");
  };
  const std::size_t space = s.rfind(' ');
  if (space == std::string_view::npos || space == 0) return bad("expected \"hostname cores\"");
  HostShare out;
  out.host = std::string(s.substr(0, space));
  const std::string_view num = s.substr(space + 1);
  const auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), out.cores);
  if (ec != std::errc{} || end != num.data() + num.size() || out.cores == 0) return bad("cores not a positive number");
  return out;
}

JobHosts job_hosts(std::span<const HostShare> shares, int self) {
  std::map<std::string_view, std::pair<int, unsigned>> per_host;  // ranks, fewest cores reported
  for (const HostShare& s : shares) {
    auto [it, fresh] = per_host.try_emplace(s.host, 0, s.cores);
    ++it->second.first;
    if (!fresh) it->second.second = std::min(it->second.second, s.cores);
  }
  JobHosts j;
  for (const auto& [host, rc] : per_host) {
    const bool over = static_cast<unsigned>(rc.first) > rc.second;
    j.any_oversubscribed = j.any_oversubscribed || over;
    if (self >= 0 && static_cast<std::size_t>(self) < shares.size() && host == shares[static_cast<std::size_t>(self)].host) {
      j.local_ranks = rc.first;
      j.here_oversubscribed = over;
    }
  }
  return j;
}

}  // namespace augur::host
