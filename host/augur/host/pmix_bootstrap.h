// PmixBootstrap: the Bootstrap of a process started by a PMIx server (Slurm's srun --mpi=pmix,
// Open MPI's mpirun, PRRTE). Rank and size come from PMIx; put/fence/get are PMIx_Put,
// PMIx_Commit + PMIx_Fence (collecting the data) and PMIx_Get; a process the server reports
// terminated or aborted, or a lost server connection, fails check_alive; abort() is PMIx_Abort.
// Only this file's implementation includes pmix.h.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "augur/host/bootstrap.h"
#include "augur/status.h"

namespace augur::host {

class PmixBootstrap final : public Bootstrap {
 public:
  // Is there a PMIx server to ask? (PMIX_NAMESPACE and PMIX_RANK in the environment, as every
  // PMIx launcher sets them.)
  static bool launched_by_pmix();
  // PMIx_Init and the job's size; `timeout` bounds each fence where the server honours it.
  static Result<std::unique_ptr<PmixBootstrap>> init(std::chrono::seconds timeout);
  ~PmixBootstrap() override;  // PMIx_Finalize
  PmixBootstrap(const PmixBootstrap&) = delete;
  PmixBootstrap& operator=(const PmixBootstrap&) = delete;

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  Status put(std::string_view key, std::string_view value) override;
  Status fence() override;
  [[nodiscard]] Result<std::string> get(int rank, std::string_view key) const override;
  Status check_alive(int* dead_rank) override;
  void abort(int code, std::string_view why) override;
  // PMIX_HOSTNAME of this process and PMIX_LOCAL_SIZE of its node, as the server gave them.
  [[nodiscard]] NodePlacement placement() const override { return placement_; }

  [[nodiscard]] const std::string& nspace() const noexcept { return nspace_; }

  // Called by the PMIx event handler (PMIx's own thread).
  void on_event(int status, int rank, std::string_view what);

 private:
  PmixBootstrap(std::string nspace, int rank, int size, std::chrono::seconds timeout)
      : nspace_(std::move(nspace)), rank_(rank), size_(size), timeout_(timeout) {}
  std::string nspace_;
  int rank_;
  int size_;
  std::chrono::seconds timeout_;
  NodePlacement placement_;
  std::size_t keys_put_ = 0;
  std::size_t handler_id_ = 0;
  bool handler_registered_ = false;
  std::atomic<bool> failed_{false};
  mutable std::mutex mu_;  // failure_ and dead_, written by PMIx's thread
  Status failure_;
  int dead_ = -1;
};

}  // namespace augur::host
