#include "augur/settings.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <optional>
#include <vector>

namespace augur {

namespace {
constexpr Setting text(std::string_view name, std::string_view def, std::string_view meaning) {
  return Setting{.name = name, .kind = SettingKind::kString, .default_value = def, .meaning = meaning};
}
constexpr Setting secret_text(std::string_view name, std::string_view meaning) {
  return Setting{.name = name, .kind = SettingKind::kString, .default_value = "", .meaning = meaning, .secret = true};
}
constexpr Setting integer(std::string_view name, std::string_view def, std::int64_t min, std::int64_t max,
                          std::string_view meaning) {
  return Setting{.name = name, .kind = SettingKind::kInt, .default_value = def, .min = min, .max = max, .meaning = meaning};
}
constexpr Setting choice(std::string_view name, std::string_view def, std::array<std::string_view, Setting::kMaxNames> names,
                         std::string_view meaning) {
  return Setting{.name = name, .kind = SettingKind::kEnum, .default_value = def, .names = names, .meaning = meaning};
}
// A bool is the enum {0, 1}: index 1 is true.
constexpr Setting flag(std::string_view name, std::string_view def, std::string_view meaning) {
  return Setting{.name = name, .kind = SettingKind::kBool, .default_value = def, .names = {"0", "1"}, .meaning = meaning};
}

constexpr std::array kSettings{
    text("AUGUR_DEVICE", "", "verbs device to use (e.g. rxe0, mlx5_0); empty: the first one listed; loopback: the in-process software device for tests (ranks as threads of one process)"),
    integer("AUGUR_PORT", "1", 1, 255, "port number on the device"),
    integer("AUGUR_GID_INDEX", "-1", -1, 255, "GID index for RoCE; -1: the RoCE v2 IPv4-mapped entry, else the first RoCE v2 one"),
    integer("AUGUR_QP_TIMEOUT", "16", 0, 31, "RC local ACK timeout exponent: 4.096 us * 2^N before a retry (0-31); with the retries, how long a link may drop packets before its peers are failed (16 and 7: 2.1 s)"),
    integer("AUGUR_QP_RETRY_COUNT", "7", 0, 7, "RC transport retries before a peer is reported dead (0-7)"),
    integer("AUGUR_EAGER_LIMIT", "8192", 64, 1 << 20, "largest message sent eagerly through bounce slots (bytes); larger ones use rendezvous"),
    integer("AUGUR_OVERSUB_EAGER_LIMIT", "32768", 0, 1 << 20, "eager limit (bytes) when a host of the job runs more ranks than it has cores, if larger than AUGUR_EAGER_LIMIT: there every rendezvous hand-off waits for its peer to get a core, and eager sends need none (docs/runtime.md, Oversubscribed hosts); bounce memory grows with it; 0: AUGUR_EAGER_LIMIT always"),
    integer("AUGUR_SLOTS", "64", 2, 32767, "eager messages in flight to one peer (2-32767): the send slots of each connection, and the largest receive window a peer is granted in the shared receive pool"),
    integer("AUGUR_SRQ_SLOTS", "128", 1, 1 << 20, "eager receive slots (eager limit plus header each) registered for all peers at start-up in one shared receive queue, and registered again each time the pool grows: the memory for eager receives is this many slots, whatever the job's size, until the peers' first windows need more (docs/launch.md, Memory)"),
    integer("AUGUR_SRQ_PEER_SLOTS", "16", 1, 32767, "receive window a peer starts with and never falls below (at most AUGUR_SLOTS): slots of the shared pool kept for it; a busy peer borrows more, up to AUGUR_SLOTS, while the pool has them to spare"),
    integer("AUGUR_SRQ_MAX_SLOTS", "16384", 1, 1 << 20, "the shared receive pool never grows beyond this many slots (capped by the device's SRQ depth); a connection that finds it full is refused"),
    choice("AUGUR_STEERING", "predicted", {"off", "posted", "predicted", "speculative"}, "off: bounce/rendezvous only; posted: a posted receive credits its sender for direct placement; predicted: also credit predicted receives ahead; speculative (opt-in, relaxed): also arm a credit into a predicted receive's buffer before that receive is posted, so that an early message is written straight into it (docs/early.md, Speculative placement; experimental; under the guard only buffers that are whole pages)"),
    flag("AUGUR_GUARD", "1", "AUGUR_STEERING=speculative: protect a buffer's pages while a credit is armed into it before its receive is posted, so that a touch by the program revokes the credit, or stops the run with a report if a message was already written there; 0: no protection (the program promises not to touch a predicted buffer before posting its receive)"),
    flag("AUGUR_EARLY_RELEASE", "0", "1 (opt-in): a blocking receive, or a wait on a receive request, returns as soon as a rendezvous message is matched and the partial pages at its buffer's edges are in; the whole pages between are read in page-aligned chunks behind page protection, and a touch of one waits until its chunk has landed (docs/early-release.md; contiguous receives of at least AUGUR_RELEASE_CHUNK bytes of whole pages; not with an assist thread). With an assist thread (AUGUR_ASSIST=on) blocking sends are released instead: MPI_Send returns at once, its whole pages write-protected until the receiver has read them, and a store into one waits"),
    integer("AUGUR_RELEASE_CHUNK", "65536", 4096, 1 << 30, "AUGUR_EARLY_RELEASE: bytes per guarded chunk at least (a page multiple; chunks grow so that a message needs at most 14), and the fewest bytes of whole pages a receive (or send) must hold to be released early"),
    integer("AUGUR_SGE_MAX_RUNS", "16", 0, 65536, "non-contiguous point-to-point data with at most this many runs per message goes by NIC gather/scatter lists (eager: one copy into the slot and out of it; rendezvous: READ scatter lists), more is packed; 0: always pack"),
    integer("AUGUR_DIRECT_MIN", "1024", 1, 1 << 20, "smallest receive (bytes) credited for direct placement, and smallest message placed directly: below it a copy out of a bounce slot costs less than the credit's RDMA write (as UCX_TM_THRESH)"),
    integer("AUGUR_DIRECT_MAX", "0", 0, (1 << 24) - 1, "largest receive (bytes) credited for direct placement; 0 (default): the eager limit, credits for eager messages only. Above the eager limit a message that finds its receive's credit is written by the NIC from the sender's buffer straight into the receive buffer (RDMA WRITE with immediate), with no RTS, READ or FIN; larger receives, and messages without a usable credit, use rendezvous. Opt-in: on rxe a halo exchange measured slower with it (docs/runtime.md)"),
    choice("AUGUR_EARLY", "landing", {"off", "landing"}, "early placement (docs/early.md): landing (default; with predicted or speculative steering) gives each predicted receive above the eager limit a registered landing zone, so that a message sent before its receive is posted is written there by RDMA at once (no RTS, READ or FIN) and moved into the receive buffer at the match by page remap or copy; off: such messages wait as an RTS, read at the post"),
    integer("AUGUR_LANDING_MAX", "4194304", 4096, (1 << 24) - 1, "largest predicted receive (bytes) given a landing zone (AUGUR_EARLY=landing); at most AUGUR_PREDICT_DEPTH zones per peer are out at once"),
    integer("AUGUR_REMAP_MIN", "0", 0, std::int64_t{1} << 40, "AUGUR_EARLY=landing: the whole pages of a landed message move into the receive buffer by remap (mremap) when they are at least this many bytes and the buffer sits at the predicted offset within a page (private anonymous memory only: not shared or file mappings); else, and for the partial pages at the edges, by copy; 0 (default): always copy, measured cheaper at every size here (docs/early.md)"),
    integer("AUGUR_CREDITS", "16", 1, 255, "direct-placement credits per peer (1-255): receives that can be credited at once"),
    choice("AUGUR_PREDICTOR", "match", {"lru", "fifo", "lfu", "single-cycle", "tagging", "tag-cycle", "tag-bettercycle", "two-level", "adaptive", "top-k", "match"}, "predictor used for steering (names as in augur-trace replay; docs/predictor.md)"),
    integer("AUGUR_PREDICT_DEPTH", "2", 1, 16, "predicted receives credited ahead per receive call (1-16)"),
    flag("AUGUR_STATS", "0", "1: print one augur-stats line per rank on stderr when the runtime ends"),
    choice("AUGUR_WAIT", "auto", {"spin", "block", "hybrid", "auto"}, "how blocking waits wait (Engine::wait, MPI_Wait and the other blocking MPI calls): spin (poll the CQ), block (sleep until a completion), hybrid (poll, then sleep), auto (spin when this host's ranks have a core each, with no assist thread and a hardware device; else hybrid)"),
    integer("AUGUR_SPIN_US", "1000", 0, 10'000'000, "hybrid: microseconds of polling without progress before sleeping (longer than a round trip, or every wait sleeps)"),
    choice("AUGUR_ASSIST", "auto", {"off", "on", "auto"}, "communication-assist thread: on, off, or auto (on when the host has at least 4 cores and two per local rank)"),
    integer("AUGUR_ASSIST_CORE", "-1", -1, 65535, "logical core (hwloc) for the assist thread; -1: near the adapter, off the application's cores"),
    choice("AUGUR_CONNECT", "lazy", {"lazy", "all"}, "lazy: a rank connects to a peer when it first sends to it, credits it or opens one-sided access to it (a TCP exchange with the peer's wire-up listener, then an RC channel), so memory and connections grow with the peers a rank talks to; all: every pair connects during MPI_Init, as before (docs/runtime.md, Connections)"),
    integer("AUGUR_KEEPALIVE_MS", "1000", 10, 3'600'000, "while waiting, check this often whether a rank died (ms), so a dead peer is reported, not waited for"),
    integer("AUGUR_RCACHE_MAX_BYTES", "1073741824", 4096, std::int64_t{1} << 50, "bound on memory the registration cache keeps registered (bytes)"),
    integer("AUGUR_RCACHE_MAX_ENTRIES", "1024", 1, 1 << 24, "bound on regions the registration cache keeps registered"),
    flag("AUGUR_RCACHE_TRACK", "1", "1: keep user buffers registered between operations, safe because memory given back to the kernel is seen (glibc malloc keeps freed memory mapped; munmap, mremap, madvise, MAP_FIXED mmap and shmdt are interposed); 0: no hooks, deregister each buffer when its operation ends"),
    choice("AUGUR_PMIX", "auto", {"off", "on", "auto"}, "how a process started without augurrun finds its job: auto takes rank, size and the address exchange from PMIx when a PMIx launcher started it (PMIX_NAMESPACE set: srun --mpi=pmix, Open MPI's mpirun), else runs as a job of one; on: PMIx or an error; off: never PMIx. augurrun's AUGUR_BOOTSTRAP always wins (docs/launch.md)"),
    text("AUGUR_BOOTSTRAP", "", "host:port of the job's key-value exchange (set by augurrun)"),
    integer("AUGUR_RANK", "0", 0, 65535, "this process's rank in the job (set by augurrun)"),
    integer("AUGUR_SIZE", "1", 1, 65536, "number of processes in the job (set by augurrun)"),
    integer("AUGUR_BOOTSTRAP_TIMEOUT", "60", 1, 86400, "seconds the exchange waits for every rank to connect at start, and for every rank to reach a fence once one has; no deadline runs between fences (a job may compute for days; a dead rank is seen by its connection)"),
    flag("AUGUR_CHECK_COLLECTIVES", "0", "1: every collective first checks that all ranks called the same one with the same root, op and byte count (one small allreduce more)"),
    text("AUGUR_HOSTS", "", "augurrun's hosts when --host-list is not given (comma-separated, ranks placed round-robin)"),
    integer("AUGUR_HOSTD_PORT", "7117", 1, 65535, "TCP port of augur-hostd, the daemon through which augurrun starts ranks on other hosts"),
    secret_text("AUGUR_HOSTD_TOKEN", "shared secret: when augur-hostd has one, it runs only requests that carry the same (never printed)"),
};

// Decimal with an optional sign, nothing else (no blanks, no suffix); nullopt if malformed or
// beyond int64.
constexpr std::optional<std::int64_t> parse_int(std::string_view v) {
  const bool negative = !v.empty() && v[0] == '-';
  if (!v.empty() && (v[0] == '-' || v[0] == '+')) v.remove_prefix(1);
  if (v.empty()) return std::nullopt;
  const std::uint64_t limit = (std::uint64_t{1} << 63) - (negative ? 0 : 1);
  std::uint64_t x = 0;
  for (const char c : v) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (x > (limit - d) / 10) return std::nullopt;
    x = x * 10 + d;
  }
  return negative ? static_cast<std::int64_t>(0 - x) : static_cast<std::int64_t>(x);
}

// The one check of a value against its entry, for the environment at run time and for the
// defaults at compile time. kInt: the integer; kBool and kEnum: the index in the names.
constexpr std::optional<std::int64_t> parse(const Setting& s, std::string_view v) {
  switch (s.kind) {
    case SettingKind::kString:
      return 0;
    case SettingKind::kInt: {
      const std::optional<std::int64_t> x = parse_int(v);
      if (!x || *x < s.min || *x > s.max) return std::nullopt;
      return x;
    }
    case SettingKind::kBool:
    case SettingKind::kEnum: {
      const auto names = s.allowed_names();
      const auto it = std::find(names.begin(), names.end(), v);
      if (it == names.end()) return std::nullopt;
      return it - names.begin();
    }
  }
  return std::nullopt;
}

constexpr bool well_formed(const Setting& s) {
  const bool has_names = !s.allowed_names().empty();
  const bool wants_names = s.kind == SettingKind::kEnum || s.kind == SettingKind::kBool;
  return s.name.starts_with("AUGUR_") && !s.meaning.empty() && s.min <= s.max && has_names == wants_names &&
         parse(s, s.default_value).has_value();
}
static_assert(std::all_of(kSettings.begin(), kSettings.end(), well_formed),
              "every setting has a meaning and a valid range or names, and its default is valid");

const Setting* find(std::string_view name) {
  auto it = std::find_if(kSettings.begin(), kSettings.end(), [&](const Setting& s) { return s.name == name; });
  return it == kSettings.end() ? nullptr : &*it;
}

// The environment's value, else the default; unvalidated.
std::string_view raw_value(const Setting& s) {
  const char* v = std::getenv(std::string(s.name).c_str());
  return v != nullptr ? std::string_view(v) : s.default_value;
}

// "a, b or c"
std::string join_names(std::span<const std::string_view> names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out.append(i + 1 == names.size() ? " or " : ", ");
    out.append(names[i]);
  }
  return out;
}

// The entry for `name`, which must be declared as `kind`.
Result<const Setting*> declared(std::string_view name, SettingKind kind) {
  const Setting* s = find(name);
  if (s == nullptr) return Status(Code::kInternal, "setting " + std::string(name) + " is not in the settings table");
  if (s->kind != kind) return Status(Code::kInternal, "setting " + std::string(name) + " read as another type than declared");
  return s;
}

// The entry's value, validated: the integer, or the index in the names.
Result<std::int64_t> parsed(std::string_view name, SettingKind kind) {
  AUGUR_ASSIGN_OR_RETURN(const Setting* s, declared(name, kind));
  const std::string_view v = raw_value(*s);
  const std::optional<std::int64_t> x = parse(*s, v);
  if (!x) {
    const std::string expected = kind == SettingKind::kInt ? "an integer in " + setting_allowed(*s) : setting_allowed(*s);
    return Status(Code::kInvalidArgument, std::string(name) + "=" + std::string(v) + ": expected " + expected);
  }
  return *x;
}
}  // namespace

std::span<const Setting> settings() { return kSettings; }

Result<std::string> setting_string(std::string_view name) {
  AUGUR_ASSIGN_OR_RETURN(const Setting* s, declared(name, SettingKind::kString));
  return std::string(raw_value(*s));
}

Result<std::int64_t> setting_int(std::string_view name) { return parsed(name, SettingKind::kInt); }

Result<bool> setting_bool(std::string_view name) {
  AUGUR_ASSIGN_OR_RETURN(std::int64_t i, parsed(name, SettingKind::kBool));
  return i == 1;
}

Result<std::size_t> setting_index(std::string_view name) {
  AUGUR_ASSIGN_OR_RETURN(std::int64_t i, parsed(name, SettingKind::kEnum));
  return static_cast<std::size_t>(i);
}

Result<std::string_view> setting_choice(std::string_view name) {
  AUGUR_ASSIGN_OR_RETURN(std::size_t i, setting_index(name));
  return find(name)->allowed_names()[i];
}

std::string setting_allowed(const Setting& s) {
  switch (s.kind) {
    case SettingKind::kString:
      return "any";
    case SettingKind::kInt:
      return "[" + std::to_string(s.min) + ", " + std::to_string(s.max) + "]";
    case SettingKind::kBool:
    case SettingKind::kEnum:
      return join_names(s.allowed_names());
  }
  return "";
}

namespace {
// Splits at spaces into lines of at most `width` (a longer word gets a line of its own).
std::vector<std::string> wrap(std::string_view text, std::size_t width) {
  std::vector<std::string> lines(1);
  while (!text.empty()) {
    const std::size_t space = text.find(' ');
    const std::string_view word = text.substr(0, space);
    text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
    if (!lines.back().empty() && lines.back().size() + 1 + word.size() > width) lines.emplace_back();
    if (!lines.back().empty()) lines.back().append(" ");
    lines.back().append(word);
  }
  return lines;
}
}  // namespace

// The value column: a secret that is set shows as "(hidden)", so tables can be pasted into logs.
std::string_view shown_value(const Setting& s) {
  const std::string_view v = raw_value(s);
  return s.secret && !v.empty() ? std::string_view("(hidden)") : v;
}

std::string format_settings() {
  // Long lists of names wrap within this width, so that the meanings stay in one column.
  constexpr std::size_t kAllowedWidth = 26;
  // Appends rather than operator+ chains: GCC 12 -O3 reports a false -Wrestrict on the latter.
  auto cell = [](std::string& out, std::string_view v, std::size_t w) {
    out.append(v);
    out.append(w > v.size() ? w - v.size() : 0, ' ');
    out.append("  ");
  };
  std::size_t wn = 4, wv = 5, wd = 7, wa = 7;
  std::vector<std::vector<std::string>> allowed;
  for (const Setting& s : kSettings) {
    wn = std::max(wn, s.name.size());
    wv = std::max(wv, shown_value(s).size());
    wd = std::max(wd, s.default_value.size() + 2);
    allowed.push_back(wrap(setting_allowed(s), kAllowedWidth));
    for (const std::string& line : allowed.back()) wa = std::max(wa, line.size());
  }
  std::string out;
  cell(out, "name", wn);
  cell(out, "value", wv);
  cell(out, "default", wd);
  cell(out, "allowed", wa);
  out.append("meaning\n");
  for (std::size_t i = 0; i < kSettings.size(); ++i) {
    const Setting& s = kSettings[i];
    std::string quoted;
    quoted.append("\"").append(s.default_value).append("\"");
    cell(out, s.name, wn);
    cell(out, shown_value(s), wv);
    cell(out, quoted, wd);
    cell(out, allowed[i][0], wa);
    out.append(s.meaning).append("\n");
    for (std::size_t k = 1; k < allowed[i].size(); ++k) {
      out.append(wn + wv + wd + 6, ' ').append(allowed[i][k]).append("\n");
    }
  }
  return out;
}

}  // namespace augur
