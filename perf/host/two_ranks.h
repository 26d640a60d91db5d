// The harness of the host benchmarks: two processes (fork + exec), one engine per steering mode, each
// on a bootstrap of its own (engines name their keys by peer only).
#pragma once

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "augur/host/engine.h"
#include "augur/host/spawn.h"

namespace augur::perf {

inline constexpr host::Steering kModes[] = {host::Steering::kOff, host::Steering::kPosted, host::Steering::kPredicted};
// Engines are made in this order: kModes[i] is the enumerator with value i (AUGUR_STEERING's order).
static_assert(static_cast<int>(kModes[0]) == 0 && static_cast<int>(kModes[1]) == 1 && static_cast<int>(kModes[2]) == 2);
inline const char* mode_name(host::Steering s) {
  return s == host::Steering::kOff ? "off" : s == host::Steering::kPosted ? "posted" : "predicted";
}

// Command-line flags of the benchmarks: "--name VALUE" (or "--name" alone when `takes_value` is
// false), each handled by `set`, which returns false on a value it refuses.
struct Flag {
  const char* name;
  bool takes_value;
  std::function<bool(const char*)> set;
};
inline Flag int_flag(const char* name, int& v) {
  return {name, true, [&v](const char* s) { v = std::atoi(s); return true; }};
}
inline Flag size_flag(const char* name, std::size_t& v) {
  return {name, true, [&v](const char* s) { v = std::strtoull(s, nullptr, 10); return true; }};
}
// A comma-separated list of byte counts (each > 0), replacing `v`'s defaults.
inline Flag sizes_flag(const char* name, std::vector<std::size_t>& v) {
  return {name, true, [&v](const char* s) {
            v.clear();
            for (const char* p = s; *p != '\0';) {
              char* end = nullptr;
              const unsigned long long b = std::strtoull(p, &end, 10);
              if (end == p || b == 0 || (*end != ',' && *end != '\0')) return false;
              v.push_back(b);
              p = *end == ',' ? end + 1 : end;
            }
            return !v.empty();
          }};
}
// False (after printing `usage`) on an unknown flag, a missing value or a refused one.
inline bool parse_flags(int argc, char** argv, const std::vector<Flag>& flags, const char* usage) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto f = std::find_if(flags.begin(), flags.end(), [&](const Flag& x) { return a == x.name; });
    const char* value = f != flags.end() && f->takes_value ? (i + 1 < argc ? argv[++i] : nullptr) : "";
    if (f == flags.end() || value == nullptr || !f->set(value)) {
      std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
      return false;
    }
  }
  return true;
}

// One engine per mode, in the order asked for, all over the same device.
struct Engines {
  std::vector<host::Steering> modes;
  std::vector<std::unique_ptr<host::TcpBootstrap>> boots;
  std::vector<std::unique_ptr<host::Engine>> engines;
  host::Engine& at(std::size_t i) { return *engines[i]; }
  host::TcpBootstrap& boot() { return *boots[0]; }
};

// `tweak(i, cfg)`, if given, adjusts engine i's configuration (after the settings and the mode).
inline Result<Engines> connect_engines(const std::vector<std::uint16_t>& ports, int rank,
                                       const std::vector<host::Steering>& modes = {std::begin(kModes), std::end(kModes)},
                                       const std::function<void(std::size_t, host::EngineConfig&)>& tweak = {}) {
  Engines e;
  e.modes = modes;
  AUGUR_ASSIGN_OR_RETURN(host::EngineConfig base, host::engine_config_from_settings());
  for (std::size_t i = 0; i < modes.size(); ++i) {
    AUGUR_ASSIGN_OR_RETURN(auto boot, host::TcpBootstrap::connect("127.0.0.1", ports[i], rank, 2, std::chrono::seconds(60)));
    host::EngineConfig cfg = base;
    cfg.steering = modes[i];
    cfg.stats = false;
    if (tweak) tweak(i, cfg);
    AUGUR_ASSIGN_OR_RETURN(auto engine, host::Engine::create(*boot, cfg));
    e.boots.push_back(std::move(boot));
    e.engines.push_back(std::move(engine));
  }
  return e;
}

// "off,predicted" -> those modes; empty on a name that is not a mode.
inline std::vector<host::Steering> parse_modes(const std::string& list) {
  std::vector<host::Steering> out;
  std::size_t at = 0;
  while (at <= list.size()) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    const std::string name = list.substr(at, comma - at);
    bool known = false;
    for (host::Steering m : kModes) {
      if (name == mode_name(m)) {
        out.push_back(m);
        known = true;
      }
    }
    if (!known) return {};
    at = comma + 1;
  }
  return out;
}

// This program's arguments (/proc/self/cmdline), for rank 1 to run it again.
inline std::vector<std::string> own_args() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  for (std::string a; std::getline(in, a, '\0');) args.push_back(a);
  return args;
}

// Both ranks run body(ports, rank, fd) where fd is a socket between them; one bootstrap port per
// engine (`engines` of them). Rank 1 is this program run again (fork + exec, same arguments) and
// finds its socket and the ports in AUGUR_PERF_RANK1 ("fd port,port,..."): the servers' threads
// run in rank 0, so a forked child may only exec (host/augur/host/spawn.h). Returns the exit
// status for main().
inline int run_two_ranks(const char* name, const std::function<Status(const std::vector<std::uint16_t>&, int, int)>& body,
                         std::size_t engines = std::size(kModes)) {
  if (const char* given = std::getenv("AUGUR_PERF_RANK1")) {  // rank 1
    std::istringstream in(given);
    int fd = -1;
    std::vector<std::uint16_t> ports;
    in >> fd;
    for (std::string p; std::getline(in >> std::ws, p, ',');) ports.push_back(static_cast<std::uint16_t>(std::stoul(p)));
    if (fd < 0 || ports.size() != engines) {
      std::fprintf(stderr, "%s (rank 1): bad AUGUR_PERF_RANK1 '%s'\n", name, given);
      return 1;
    }
    Status s = body(ports, 1, fd);
    if (!s.ok()) std::fprintf(stderr, "%s (rank 1): %s\n", name, s.to_string().c_str());
    return s.ok() ? 0 : 1;
  }
  std::vector<std::unique_ptr<host::BootstrapServer>> servers;
  std::vector<std::uint16_t> ports;
  std::string given;
  for (std::size_t i = 0; i < engines; ++i) {
    // Long: the engines of modes not being measured sit idle on their exchange meanwhile.
    auto s = host::BootstrapServer::start(2, "127.0.0.1", 0, std::chrono::seconds(3600));
    if (!s.ok()) {
      std::fprintf(stderr, "%s: %s\n", name, s.status().to_string().c_str());
      return 1;
    }
    ports.push_back(s.value()->port());
    given.append(i == 0 ? 0 : 1, ',').append(std::to_string(ports.back()));
    servers.push_back(std::move(s.value()));
  }
  int sv[2];
  // Only rank 1's end crosses the exec.
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 || fcntl(sv[1], F_SETFD, 0) != 0) return 1;
  std::vector<std::string> args = own_args();
  if (args.empty()) return 1;
  args[0] = "/proc/self/exe";
  const host::PreparedExec exec(std::move(args), {"AUGUR_PERF_RANK1=" + std::to_string(sv[1]) + " " + given},
                                std::string(name) + ": exec of rank 1: ");
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) exec.exec();
  close(sv[1]);
  if (pid < 0) return 1;
  Status s = body(ports, 0, sv[0]);
  if (!s.ok()) std::fprintf(stderr, "%s (rank 0): %s\n", name, s.to_string().c_str());
  std::fflush(nullptr);
  int st = 0;
  waitpid(pid, &st, 0);
  return s.ok() && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

}  // namespace augur::perf
