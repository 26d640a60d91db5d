// The harness of the host benchmarks: two processes (fork), one engine per steering mode, each
// on a bootstrap of its own (engines name their keys by peer only).
#pragma once

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "augur/host/engine.h"

namespace augur::perf {

inline constexpr host::Steering kModes[] = {host::Steering::kOff, host::Steering::kPosted, host::Steering::kPredicted};
inline const char* mode_name(host::Steering s) {
  return s == host::Steering::kOff ? "off" : s == host::Steering::kPosted ? "posted" : "predicted";
}

// One engine per mode, in the order asked for, all over the same device.
struct Engines {
  std::vector<host::Steering> modes;
  std::vector<std::unique_ptr<host::TcpBootstrap>> boots;
  std::vector<std::unique_ptr<host::Engine>> engines;
  host::Engine& at(std::size_t i) { return *engines[i]; }
  host::TcpBootstrap& boot() { return *boots[0]; }
};

inline Result<Engines> connect_engines(const std::vector<std::uint16_t>& ports, int rank,
                                       const std::vector<host::Steering>& modes = {std::begin(kModes), std::end(kModes)}) {
  Engines e;
  e.modes = modes;
  AUGUR_ASSIGN_OR_RETURN(host::EngineConfig base, host::engine_config_from_settings());
  for (std::size_t i = 0; i < modes.size(); ++i) {
    AUGUR_ASSIGN_OR_RETURN(auto boot, host::TcpBootstrap::connect("127.0.0.1", ports[i], rank, 2, std::chrono::seconds(60)));
    host::EngineConfig cfg = base;
    cfg.steering = modes[i];
    cfg.stats = false;
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

// Forks rank 1; both ranks run body(ports, rank, fd) where fd is a socket between them; one
// bootstrap port per engine (`engines` of them). Returns the exit status for main().
inline int run_two_ranks(const char* name, const std::function<Status(const std::vector<std::uint16_t>&, int, int)>& body,
                         std::size_t engines = std::size(kModes)) {
  std::vector<std::unique_ptr<host::BootstrapServer>> servers;
  std::vector<std::uint16_t> ports;
  for (std::size_t i = 0; i < engines; ++i) {
    // Long: the engines of modes not being measured sit idle on their exchange meanwhile.
    auto s = host::BootstrapServer::start(2, "127.0.0.1", 0, std::chrono::seconds(3600));
    if (!s.ok()) {
      std::fprintf(stderr, "%s: %s\n", name, s.status().to_string().c_str());
      return 1;
    }
    ports.push_back(s.value()->port());
    servers.push_back(std::move(s.value()));
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return 1;
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return 1;
  const int rank = pid == 0 ? 1 : 0;
  close(sv[rank == 0 ? 1 : 0]);
  Status s = body(ports, rank, sv[rank == 0 ? 0 : 1]);
  if (!s.ok()) std::fprintf(stderr, "%s (rank %d): %s\n", name, rank, s.to_string().c_str());
  std::fflush(nullptr);
  if (rank == 1) _exit(s.ok() ? 0 : 1);
  int st = 0;
  waitpid(pid, &st, 0);
  return s.ok() && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

}  // namespace augur::perf
