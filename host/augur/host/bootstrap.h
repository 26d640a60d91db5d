// Bootstrap: how the processes of one job find each other before any RDMA connection exists.
// A key-value exchange with put / fence / get, like PMI: each rank puts its own keys (QP
// addresses, hostnames), fence waits until every rank has put and fenced, then any rank's keys can
// be read. Two implementations: augurrun's TCP exchange (TcpBootstrap, below) and a PMIx client
// for jobs started by a resource manager or another MPI's launcher (pmix_bootstrap.h).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "augur/status.h"
#include "augur/unique_fd.h"

namespace augur::host {

// Where the launcher placed this rank, when it says (a resource manager does; augurrun's exchange
// leaves it to the ranks' host names): the node's name as the launcher knows it, and how many
// ranks of the job it started there.
struct NodePlacement {
  std::string node;
  int local_size = 0;
};

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  // Publishes key=value for this rank; visible to others after the next fence.
  virtual Status put(std::string_view key, std::string_view value) = 0;
  // Collective: returns once every rank has fenced; a dead rank or the timeout fails it.
  virtual Status fence() = 0;
  // A key put by `rank` before the last fence; kNotFound if it was never put.
  [[nodiscard]] virtual Result<std::string> get(int rank, std::string_view key) const = 0;
  // Non-blocking: has the job been aborted (a rank died, a rank misbehaved)? Returns OK if not;
  // else kPeerFailure naming the reason, and `*dead_rank` the rank that died (-1 if none).
  virtual Status check_alive(int* dead_rank) = 0;
  // The program gives up (MPI_Abort, a fatal error): tell the launcher to end the whole job, if
  // this exchange has a way to; the caller exits right after. augurrun's sees the exit itself.
  virtual void abort(int code, std::string_view why) {
    (void)code;
    (void)why;
  }
  // The launcher's placement of this rank, if it has one (empty node: it has not).
  [[nodiscard]] virtual NodePlacement placement() const { return {}; }
};

// Limits that bound what a malformed or hostile peer can make the server store.
inline constexpr std::size_t kMaxKeyBytes = 256;
inline constexpr std::size_t kMaxValueBytes = 64 * 1024;
inline constexpr std::size_t kMaxKeysPerRank = 4096;
inline constexpr int kMaxRanks = 1 << 16;
// The key and value bounds above, the same for every exchange (TCP, PMIx).
Status check_key_value(std::size_t key_len, std::size_t value_len);

// The job's key-value server: accepts `size` ranks over TCP, serves fences, and tells every
// rank when one of them disconnects early (so that nobody hangs). augurrun runs one per job; tests
// run one in a thread.
class BootstrapServer {
 public:
  // Listens on `bind_addr`:`port` (port 0: any free port).
  static Result<std::unique_ptr<BootstrapServer>> start(int size, const std::string& bind_addr, std::uint16_t port,
                                                        std::chrono::milliseconds timeout);
  ~BootstrapServer();
  BootstrapServer(const BootstrapServer&) = delete;
  BootstrapServer& operator=(const BootstrapServer&) = delete;

  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  // Blocks until every rank has said goodbye (OK) or the job failed (the reason). After a failure
  // the server keeps telling late ranks why, until it is destroyed.
  Status wait();

 private:
  BootstrapServer(int size, UniqueFd listen_fd, std::uint16_t port, std::chrono::milliseconds timeout);
  void run();
  void finish(Status result);
  int size_;
  UniqueFd listen_fd_;
  UniqueFd wake_rd_, wake_wr_;  // a pipe: the destructor wakes the server thread to stop
  std::uint16_t port_;
  std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  Status result_;
  std::thread thread_;  // last: started after everything it uses exists
};

// A rank's connection to the BootstrapServer. Thread-safe; check_alive never blocks on the others.
class TcpBootstrap final : public Bootstrap {
 public:
  static Result<std::unique_ptr<TcpBootstrap>> connect(const std::string& host, std::uint16_t port, int rank, int size,
                                                       std::chrono::milliseconds timeout);
  // From AUGUR_BOOTSTRAP (host:port), AUGUR_RANK, AUGUR_SIZE, AUGUR_BOOTSTRAP_TIMEOUT, as augurrun sets them.
  static Result<std::unique_ptr<TcpBootstrap>> from_settings();
  ~TcpBootstrap() override;

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  Status put(std::string_view key, std::string_view value) override;
  Status fence() override;
  [[nodiscard]] Result<std::string> get(int rank, std::string_view key) const override;
  Status check_alive(int* dead_rank) override;

 private:
  TcpBootstrap(UniqueFd fd, int rank, int size, std::chrono::milliseconds timeout)
      : fd_(std::move(fd)), rank_(rank), size_(size), timeout_(timeout) {}
  UniqueFd fd_;
  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  std::size_t keys_put_ = 0;
  std::vector<unsigned char> in_;  // bytes read from the server, not yet consumed
  Status aborted_;  // sticky once the server said so
  int last_dead_ = -1;  // over the job, bounded like the server's count
  std::map<std::pair<int, std::string>, std::string, std::less<>> kv_;
  mutable std::mutex mu_;  // the application thread and the engine's assist thread share it
};

}  // namespace augur::host
