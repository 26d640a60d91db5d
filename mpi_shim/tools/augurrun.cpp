// augurrun: starts an MPI job of N ranks on this host, in network namespaces, or on other hosts
// (through their augur-hostd), with the job's key-value exchange (BootstrapServer) running
// in-process. A remote rank is represented here by a local proxy process (this program, run as
// `augurrun --rank-proxy`) that relays its output and exits as it exited. A job never outlives its
// launcher: children die with it (PR_SET_PDEATHSIG), and when one rank fails — non-zero exit,
// signal, or a failure the bootstrap server reports — or augurrun gets SIGINT/SIGTERM, every
// other rank is stopped (SIGTERM, then SIGKILL).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "augur/host/bootstrap.h"
#include "augur/host/launch.h"
#include "augur/host/spawn.h"
#include "augur/settings.h"

namespace {

volatile sig_atomic_t g_signal = 0;
void on_signal(int sig) { g_signal = sig; }

void usage(FILE* f) {
  std::fputs(
      "usage: augurrun -n N [--host-list H1,H2,...] [-x NAME]... [--bootstrap-addr ADDR] [--tag-output]\n"
      "                [--continue-on-failure] [--print-config] PROGRAM [ARGS...]\n"
      "  -n, -np N          number of ranks\n"
      "  --host-list LIST   hosts for the ranks, round-robin (default $AUGUR_HOSTS, else this host):\n"
      "                     localhost or this host's name/address; netns:NAME (a network namespace\n"
      "                     of this machine); or HOST[:PORT], another host running augur-hostd\n"
      "                     (port default $AUGUR_HOSTD_PORT; with an explicit port even this host\n"
      "                     is reached through augur-hostd)\n"
      "  -x NAME            also pass environment variable NAME to remote ranks (AUGUR_* always are)\n"
      "  --bootstrap-addr A address the ranks use to reach augurrun's key-value exchange (default\n"
      "                     127.0.0.1; with netns hosts $AUGUR_SOFTROCE_ADDR1; with remote hosts\n"
      "                     this host's address on the route to the first one)\n"
      "  --tag-output       prefix every output line with [rank]\n"
      "  --continue-on-failure  when a rank fails, do not stop the others: they learn of it as\n"
      "                     MPI_ERR_PROC_FAILED and decide (as ULFM's --enable-recovery); the job's\n"
      "                     exit status is still the failed rank's. Ctrl-C/SIGTERM stop everything\n"
      "  --print-config     print the AUGUR_* settings with their values and exit (unless PROGRAM)\n",
      f);
}

struct Rank {
  pid_t pid = -1;
  bool running = false;
  int out_fd = -1, err_fd = -1;
  std::string out_buf, err_buf;
};

// Forwards complete lines from `fd` with a rank prefix; returns false at EOF.
bool forward(int fd, std::string& buf, int rank, FILE* to) {
  char tmp[4096];
  const ssize_t n = read(fd, tmp, sizeof tmp);
  if (n <= 0) {
    if (!buf.empty()) std::fprintf(to, "[%d] %s\n", rank, buf.c_str());
    buf.clear();
    std::fflush(to);
    return n < 0 && errno == EINTR;
  }
  buf.append(tmp, static_cast<std::size_t>(n));
  std::size_t start = 0, nl;
  while ((nl = buf.find('\n', start)) != std::string::npos) {
    std::fprintf(to, "[%d] %.*s\n", rank, static_cast<int>(nl - start), buf.c_str() + start);
    start = nl + 1;
  }
  buf.erase(0, start);
  std::fflush(to);
  return true;
}

struct ServerWatch {
  std::atomic<bool> done{false};
  augur::Status status;
};

volatile sig_atomic_t g_forward = 0;
void on_forward(int sig) { g_forward = sig; }

// `augurrun --rank-proxy HOST:PORT [--env NAME]... -- PROGRAM ARGS...`: runs one rank on HOST
// through its augur-hostd with this process's AUGUR_* variables (and the --env ones), relays its
// output, forwards SIGINT/SIGTERM/SIGHUP to it, and exits as it exited. If this proxy is killed,
// the connection closes and the daemon kills the rank.
int rank_proxy(int argc, char** argv) {
  std::string where;
  std::vector<std::string> names;
  int i = 2;
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--env" && i + 1 < argc) {
      names.emplace_back(argv[++i]);
    } else if (where.empty()) {
      where = a;
    }
  }
  const auto colon = where.rfind(':');
  if (where.empty() || colon == std::string::npos || i >= argc) {
    std::fprintf(stderr, "augurrun --rank-proxy: usage: --rank-proxy HOST:PORT [--env NAME]... -- PROGRAM ARGS...\n");
    return 2;
  }
  augur::host::launch::Request req;
  for (int k = i; k < argc; ++k) req.argv.emplace_back(argv[k]);
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    const std::string name = kv.substr(0, kv.find('='));
    if (name.rfind("AUGUR_", 0) == 0 || std::find(names.begin(), names.end(), name) != names.end()) req.env.push_back(kv);
  }
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) != nullptr) req.cwd = cwd;
  if (auto t = augur::setting_string("AUGUR_HOSTD_TOKEN"); t.ok()) req.token = t.value();
  struct sigaction sa {};
  sa.sa_handler = on_forward;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  const std::string host = where.substr(0, colon);
  const auto port = static_cast<std::uint16_t>(std::strtoul(where.c_str() + colon + 1, nullptr, 10));
  auto st = augur::host::launch::run_remote(host, port, req, STDOUT_FILENO, STDERR_FILENO, &g_forward,
                                            std::chrono::seconds(30));
  if (!st.ok()) {
    const auto rank = augur::setting_int("AUGUR_RANK");
    std::fprintf(stderr, "augurrun: rank %s on %s: %s\n", rank.ok() ? std::to_string(rank.value()).c_str() : "?",
                 where.c_str(), st.status().to_string().c_str());
    return 1;
  }
  if (WIFSIGNALED(st.value())) {  // die the same way, so augurrun reports the rank's signal
    signal(WTERMSIG(st.value()), SIG_DFL);
    raise(WTERMSIG(st.value()));
  }
  return WIFEXITED(st.value()) ? WEXITSTATUS(st.value()) : 1;
}

void append_hosts(std::vector<std::string>& hosts, const std::string& list) {
  std::size_t pos = 0;
  for (;;) {
    const std::size_t comma = list.find(',', pos);
    const std::string h = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (!h.empty()) hosts.push_back(h);
    if (comma == std::string::npos) return;
    pos = comma + 1;
  }
}

enum class HostKind { kLocal, kNetns, kRemote };
struct Host {
  HostKind kind = HostKind::kLocal;
  std::string name;      // netns name, or the remote host
  std::uint16_t port = 0;  // remote: its augur-hostd
};

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--rank-proxy") == 0) return rank_proxy(argc, argv);
  int n = -1;
  bool tag_output = false, print_config = false, continue_on_failure = false;
  std::vector<std::string> hosts;
  std::vector<std::string> forward_env;
  std::string boot_addr;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "augurrun: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "-n" || a == "-np" || a == "--np") {
      char* end = nullptr;
      const char* v = next();
      n = static_cast<int>(std::strtol(v, &end, 10));
      if (*v == '\0' || *end != '\0' || n <= 0 || n > augur::host::kMaxRanks) {
        std::fprintf(stderr, "augurrun: -n %s: expected a rank count in [1, %d]\n", v, augur::host::kMaxRanks);
        return 2;
      }
    } else if (a == "--host-list" || a == "--hosts" || a == "-H") {
      append_hosts(hosts, next());
    } else if (a == "-x") {
      forward_env.emplace_back(next());
    } else if (a == "--bootstrap-addr") {
      boot_addr = next();
    } else if (a == "--tag-output") {
      tag_output = true;
    } else if (a == "--continue-on-failure") {
      continue_on_failure = true;
    } else if (a == "--print-config") {
      print_config = true;
    } else if (a == "-h" || a == "--help") {
      usage(stdout);
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "augurrun: unknown option %s\n", a.c_str());
      usage(stderr);
      return 2;
    } else {
      break;
    }
  }
  if (print_config) {
    std::fputs(augur::format_settings().c_str(), stdout);
    std::fflush(stdout);
    if (i >= argc) return 0;
  }
  if (i >= argc || n < 0) {
    usage(stderr);
    return 2;
  }
  char** prog = argv + i;

  if (hosts.empty()) {
    if (auto env_hosts = augur::setting_string("AUGUR_HOSTS"); env_hosts.ok()) append_hosts(hosts, env_hosts.value());
  }
  auto hostd_port = augur::setting_int("AUGUR_HOSTD_PORT");
  if (!hostd_port.ok()) {
    std::fprintf(stderr, "augurrun: %s\n", hostd_port.status().to_string().c_str());
    return 2;
  }
  // Hosts: this one, netns:NAME, or another host reached through its augur-hostd.
  std::vector<Host> placed;
  bool any_netns = false;
  std::string first_remote;
  for (const auto& h : hosts) {
    Host p;
    if (h.rfind("netns:", 0) == 0) {
      p = {HostKind::kNetns, h.substr(6), 0};
      any_netns = true;
    } else {
      const auto colon = h.rfind(':');
      const std::string name = h.substr(0, colon);
      long port = hostd_port.value();
      if (colon != std::string::npos) {
        char* end = nullptr;
        port = std::strtol(h.c_str() + colon + 1, &end, 10);
        if (*end != '\0' || port < 1 || port > 65535) {
          std::fprintf(stderr, "augurrun: host %s: bad augur-hostd port\n", h.c_str());
          return 2;
        }
      }
      // An explicit port always means "through augur-hostd", even to this host (tests use that).
      if (colon == std::string::npos && augur::host::launch::is_local_host(name)) {
        p = {HostKind::kLocal, name, 0};
      } else {
        p = {HostKind::kRemote, name, static_cast<std::uint16_t>(port)};
        if (first_remote.empty()) first_remote = name;
      }
    }
    placed.push_back(p);
  }
  if (placed.empty()) placed.push_back(Host{});
  if (boot_addr.empty()) {
    if (!first_remote.empty()) {
      auto a = augur::host::launch::local_address_toward(first_remote);
      if (!a.ok()) {
        std::fprintf(stderr, "augurrun: %s (give --bootstrap-addr)\n", a.status().to_string().c_str());
        return 2;
      }
      boot_addr = a.value();
    } else if (any_netns) {
      const char* a = std::getenv("AUGUR_SOFTROCE_ADDR1");
      if (a == nullptr || *a == '\0') {
        std::fprintf(stderr, "augurrun: netns hosts need --bootstrap-addr (or AUGUR_SOFTROCE_ADDR1)\n");
        return 2;
      }
      boot_addr = a;
    } else {
      boot_addr = "127.0.0.1";
    }
  }
  const bool reachable_from_outside = any_netns || !first_remote.empty();

  auto timeout = augur::setting_int("AUGUR_BOOTSTRAP_TIMEOUT");
  if (!timeout.ok()) {
    std::fprintf(stderr, "augurrun: %s\n", timeout.status().to_string().c_str());
    return 2;
  }
  auto server = augur::host::BootstrapServer::start(n, reachable_from_outside ? "0.0.0.0" : "127.0.0.1", 0,
                                                    std::chrono::seconds(timeout.value()));
  if (!server.ok()) {
    std::fprintf(stderr, "augurrun: bootstrap server: %s\n", server.status().to_string().c_str());
    return 1;
  }
  const std::string boot = boot_addr + ":" + std::to_string(server.value()->port());
  // Watched from a thread (BootstrapServer::wait blocks); augurrun leaves with _exit, never
  // destroying the server under it.
  auto* watch = new ServerWatch;
  augur::host::BootstrapServer* srv = server.value().get();
  std::thread([watch, srv] {
    watch->status = srv->wait();
    watch->done = true;
  }).detach();

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::fflush(nullptr);
  const pid_t parent = getpid();
  std::vector<Rank> ranks(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    if (tag_output && (pipe(out) != 0 || pipe(err) != 0)) {
      std::perror("augurrun: pipe");
      return 1;
    }
    const Host& host = placed[static_cast<std::size_t>(r) % placed.size()];
    std::vector<std::string> args;  // what runs the program: itself, ip netns exec, or a proxy
    if (host.kind == HostKind::kNetns) {
      args = {"ip", "netns", "exec", host.name};
    } else if (host.kind == HostKind::kRemote) {
      args = {"/proc/self/exe", "--rank-proxy", host.name + ":" + std::to_string(host.port)};
      for (const auto& e : forward_env) {
        args.emplace_back("--env");
        args.push_back(e);
      }
      args.emplace_back("--");
    }
    for (char** p = prog; *p != nullptr; ++p) args.emplace_back(*p);
    // Built before fork: augurrun has a thread (the bootstrap server's); see spawn.h.
    const augur::host::PreparedExec exec(
        std::move(args), {"AUGUR_BOOTSTRAP=" + boot, "AUGUR_RANK=" + std::to_string(r), "AUGUR_SIZE=" + std::to_string(n)},
        "augurrun: rank " + std::to_string(r) + ": cannot run " + prog[0] + ": ");
    const pid_t pid = fork();
    if (pid < 0) {
      std::perror("augurrun: fork");
      for (auto& k : ranks) {
        if (k.running) kill(k.pid, SIGKILL);
      }
      return 1;
    }
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(1);  // the launcher died before prctl
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      signal(SIGHUP, SIG_DFL);
      signal(SIGPIPE, SIG_DFL);
      if (tag_output) {
        dup2(out[1], STDOUT_FILENO);
        dup2(err[1], STDERR_FILENO);
        close(out[0]);
        close(out[1]);
        close(err[0]);
        close(err[1]);
      }
      exec.exec();
    }
    Rank& k = ranks[static_cast<std::size_t>(r)];
    k.pid = pid;
    k.running = true;
    if (tag_output) {
      close(out[1]);
      close(err[1]);
      k.out_fd = out[0];
      k.err_fd = err[0];
    }
  }

  int running = n;
  // Why the job stops. A primary cause (a rank's own failure, a signal to augurrun) outranks a
  // secondary one (a rank that stopped because another died — exit status 75 — or the bootstrap
  // server's report of a lost rank), which may be seen first.
  std::string reason;
  int exit_code = 0;
  bool primary = false;
  bool killing = false;
  bool sigkilled = false;
  auto kill_start = std::chrono::steady_clock::now();
  auto stop_job = [&](const std::string& why, int code, bool is_primary) {
    if (reason.empty() || (is_primary && !primary)) {
      reason = why;
      exit_code = code;
      primary = is_primary;
    }
    if (killing || (continue_on_failure && g_signal == 0)) return;
    killing = true;
    kill_start = std::chrono::steady_clock::now();
    for (auto& k : ranks) {
      if (k.running) kill(k.pid, SIGTERM);
    }
  };
  constexpr int kPeerDiedExit = 75;  // mpi_shim/src/shim.h
  while (running > 0 || (tag_output && [&] {
           for (auto& k : ranks) {
             if (k.out_fd >= 0 || k.err_fd >= 0) return true;
           }
           return false;
         }())) {
    if (tag_output) {
      std::vector<pollfd> fds;
      std::vector<std::pair<int, bool>> who;  // rank, is stderr
      for (int r = 0; r < n; ++r) {
        Rank& k = ranks[static_cast<std::size_t>(r)];
        if (k.out_fd >= 0) {
          fds.push_back({k.out_fd, POLLIN, 0});
          who.emplace_back(r, false);
        }
        if (k.err_fd >= 0) {
          fds.push_back({k.err_fd, POLLIN, 0});
          who.emplace_back(r, true);
        }
      }
      if (!fds.empty() && poll(fds.data(), fds.size(), 50) > 0) {
        for (std::size_t f = 0; f < fds.size(); ++f) {
          if ((fds[f].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
          Rank& k = ranks[static_cast<std::size_t>(who[f].first)];
          int& fd = who[f].second ? k.err_fd : k.out_fd;
          if (!forward(fd, who[f].second ? k.err_buf : k.out_buf, who[f].first, who[f].second ? stderr : stdout)) {
            close(fd);
            fd = -1;
          }
        }
      } else if (fds.empty()) {
        usleep(20'000);
      }
    } else {
      usleep(20'000);
    }
    if (g_signal != 0 && (!primary || !killing)) stop_job(std::string("received ") + strsignal(g_signal), 128 + g_signal, true);
    int st = 0;
    pid_t pid;
    while (running > 0 && (pid = waitpid(-1, &st, WNOHANG)) > 0) {
      for (int r = 0; r < n; ++r) {
        Rank& k = ranks[static_cast<std::size_t>(r)];
        if (k.pid != pid || !k.running) continue;
        k.running = false;
        --running;
        if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
          stop_job("rank " + std::to_string(r) + " exited with status " + std::to_string(WEXITSTATUS(st)),
                   WEXITSTATUS(st), WEXITSTATUS(st) != kPeerDiedExit);
        } else if (WIFSIGNALED(st)) {
          const int sig = WTERMSIG(st);
          const bool ours = killing && (sig == SIGTERM || (sigkilled && sig == SIGKILL));
          if (!ours) {
            stop_job("rank " + std::to_string(r) + " was killed by signal " + std::to_string(sig) + " (" +
                         strsignal(sig) + ")",
                     128 + sig, true);
          }
        }
      }
    }
    if (watch->done && !watch->status.ok() && running > 0 && !killing) {
      stop_job("the job failed: " + watch->status.to_string(), 1, false);
    }
    if (killing && !sigkilled && running > 0 &&
        std::chrono::steady_clock::now() - kill_start > std::chrono::seconds(3)) {
      sigkilled = true;
      for (auto& k : ranks) {
        if (k.running) kill(k.pid, SIGKILL);
      }
    }
  }
  std::fflush(stdout);
  if (!reason.empty()) {
    std::fprintf(stderr, "augurrun: %s; %s\n", reason.c_str(), killing ? "stopped the job" : "the other ranks went on");
  }
  std::fflush(nullptr);
  // A server that has finished is joined (its thread is done: no wait), so that a thread checker
  // sees no thread left behind; one still running goes with the process.
  if (watch->done) server.value().reset();
  _exit(exit_code);
}
