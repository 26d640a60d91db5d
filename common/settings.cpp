#include "augur/settings.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>

namespace augur {

namespace {
constexpr std::array kSettings{
    Setting{"AUGUR_DEVICE", "", "verbs device to use (e.g. rxe0, mlx5_0); empty: the first one listed"},
    Setting{"AUGUR_PORT", "1", "port number on the device"},
    Setting{"AUGUR_GID_INDEX", "-1", "GID index for RoCE; -1: the RoCE v2 IPv4-mapped entry, else the first RoCE v2 one"},
    Setting{"AUGUR_QP_TIMEOUT", "16", "RC local ACK timeout exponent: 4.096 us * 2^N before a retry (0-31); with the retries, how long a link may drop packets before its peers are failed (16 and 7: 2.1 s)"},
    Setting{"AUGUR_QP_RETRY_COUNT", "7", "RC transport retries before a peer is reported dead (0-7)"},
    Setting{"AUGUR_EAGER_LIMIT", "8192", "largest message sent eagerly through bounce slots (bytes); larger ones use rendezvous"},
    Setting{"AUGUR_SLOTS", "64", "bounce slots per peer and direction (2-32767): bound unexpected-message memory and messages in flight"},
    Setting{"AUGUR_STEERING", "predicted", "off: bounce/rendezvous only; posted: a posted receive credits its sender for direct placement; predicted: also credit predicted receives ahead"},
    Setting{"AUGUR_SGE_MAX_RUNS", "16", "non-contiguous point-to-point data with at most this many runs per message goes by NIC gather/scatter lists (eager: one copy into the slot and out of it; rendezvous: READ scatter lists), more is packed; 0: always pack"},
    Setting{"AUGUR_DIRECT_MIN", "1024", "smallest receive (bytes) credited for direct placement, and smallest message placed directly: below it a copy out of a bounce slot costs less than the credit's RDMA write (as UCX_TM_THRESH)"},
    Setting{"AUGUR_CREDITS", "16", "direct-placement credits per peer (1-255): receives that can be credited at once"},
    Setting{"AUGUR_PREDICTOR", "single-cycle", "predictor used for steering (names as in augur-trace replay)"},
    Setting{"AUGUR_PREDICT_DEPTH", "2", "predicted receives credited ahead per receive call (1-16)"},
    Setting{"AUGUR_STATS", "0", "1: print one augur-stats line per rank on stderr when the runtime ends"},
    Setting{"AUGUR_WAIT", "hybrid", "how blocking waits wait (Engine::wait, MPI_Wait and the other blocking MPI calls): spin (poll the CQ), block (sleep until a completion), hybrid (poll, then sleep)"},
    Setting{"AUGUR_SPIN_US", "1000", "hybrid: microseconds of polling without progress before sleeping (longer than a round trip, or every wait sleeps)"},
    Setting{"AUGUR_ASSIST", "auto", "communication-assist thread: on, off, or auto (on when the host has at least 4 cores and two per local rank)"},
    Setting{"AUGUR_ASSIST_CORE", "-1", "logical core (hwloc) for the assist thread; -1: near the adapter, off the application's cores"},
    Setting{"AUGUR_KEEPALIVE_MS", "1000", "while waiting, check this often whether a rank died (ms), so a dead peer is reported, not waited for"},
    Setting{"AUGUR_RCACHE_MAX_BYTES", "1073741824", "bound on memory the registration cache keeps registered (bytes)"},
    Setting{"AUGUR_RCACHE_MAX_ENTRIES", "1024", "bound on regions the registration cache keeps registered"},
    Setting{"AUGUR_RCACHE_TRACK", "1", "1: keep user buffers registered between operations, safe because memory given back to the kernel is seen (glibc malloc keeps freed memory mapped; munmap, mremap, madvise, MAP_FIXED mmap and shmdt are interposed); 0: no hooks, deregister each buffer when its operation ends"},
    Setting{"AUGUR_BOOTSTRAP", "", "host:port of the job's key-value exchange (set by augurrun)"},
    Setting{"AUGUR_RANK", "0", "this process's rank in the job (set by augurrun)"},
    Setting{"AUGUR_SIZE", "1", "number of processes in the job (set by augurrun)"},
    Setting{"AUGUR_BOOTSTRAP_TIMEOUT", "60", "seconds the exchange waits for every rank to connect at start, and for every rank to reach a fence once one has; no deadline runs between fences (a job may compute for days; a dead rank is seen by its connection)"},
    Setting{"AUGUR_CHECK_COLLECTIVES", "0", "1: every collective first checks that all ranks called the same one with the same root, op and byte count (one small allreduce more)"},
    Setting{"AUGUR_HOSTS", "", "augurrun's hosts when --host-list is not given (comma-separated, ranks placed round-robin)"},
    Setting{"AUGUR_HOSTD_PORT", "7117", "TCP port of augur-hostd, the daemon through which augurrun starts ranks on other hosts"},
    Setting{"AUGUR_HOSTD_TOKEN", "", "shared secret: when augur-hostd has one, it runs only requests that carry the same"},
};

const Setting* find(std::string_view name) {
  auto it = std::find_if(kSettings.begin(), kSettings.end(), [&](const Setting& s) { return s.name == name; });
  return it == kSettings.end() ? nullptr : &*it;
}
}  // namespace

std::span<const Setting> settings() { return kSettings; }

Result<std::string> setting_string(std::string_view name) {
  const Setting* s = find(name);
  if (s == nullptr) return Status(Code::kInternal, "setting " + std::string(name) + " is not in the settings table");
  const char* v = std::getenv(std::string(name).c_str());
  return std::string(v != nullptr ? std::string_view(v) : s->default_value);
}

Result<std::int64_t> setting_int(std::string_view name, std::int64_t min, std::int64_t max) {
  AUGUR_ASSIGN_OR_RETURN(std::string v, setting_string(name));
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  const bool malformed = v.empty() || end == nullptr || *end != '\0' || errno == ERANGE;
  if (malformed || x < min || x > max) {
    return Status(Code::kInvalidArgument, std::string(name) + "=" + v + ": expected an integer in [" +
                                              std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return static_cast<std::int64_t>(x);
}

std::string format_settings() {
  // Appends rather than operator+ chains: GCC 12 -O3 reports a false -Wrestrict on the latter.
  auto cell = [](std::string& out, std::string_view v, std::size_t w) {
    out.append(v);
    out.append(w > v.size() ? w - v.size() : 0, ' ');
    out.append("  ");
  };
  std::size_t wn = 4, wv = 5, wd = 7;
  for (const Setting& s : kSettings) {
    wn = std::max(wn, s.name.size());
    wv = std::max(wv, setting_string(s.name).value().size());
    wd = std::max(wd, s.default_value.size() + 2);
  }
  std::string out;
  cell(out, "name", wn);
  cell(out, "value", wv);
  cell(out, "default", wd);
  out.append("meaning\n");
  for (const Setting& s : kSettings) {
    std::string quoted;
    quoted.append("\"").append(s.default_value).append("\"");
    cell(out, s.name, wn);
    cell(out, setting_string(s.name).value(), wv);
    cell(out, quoted, wd);
    out.append(s.meaning).append("\n");
  }
  return out;
}

}  // namespace augur
