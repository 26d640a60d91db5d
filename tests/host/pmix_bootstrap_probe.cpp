// PmixBootstrap against a real PMIx server: run by Open MPI's mpirun (tests/host/CMakeLists.txt),
// every rank checks the exchange and exits non-zero on the first wrong answer. No verbs device.
//   - rank and size agree with the launcher's (OMPI_COMM_WORLD_RANK/SIZE), and so does the
//     placement (the node's name, and all ranks on it);
//   - every rank's keys are read back by every rank after one fence, binary values intact
//     (NUL bytes, 64 KiB), an empty value stays empty;
//   - a key never put is kNotFound; a bad key or an oversized value is refused before PMIx;
//   - a second round of put/fence/get sees the new keys (the engine fences three times);
//   - check_alive is OK while every rank lives, and fails naming the rank once an abnormal end is
//     reported to the event handler.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "augur/host/pmix_bootstrap.h"

namespace {

int failures = 0;

void check(bool ok, int rank, const std::string& what) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "pmix_bootstrap_probe: rank %d: FAILED: %s\n", rank, what.c_str());
}

std::string value_of(int rank, int round) {
  std::string v = "rank " + std::to_string(rank) + " round " + std::to_string(round);
  v.push_back('\0');  // binary values must survive
  v += "tail";
  return v;
}

}  // namespace

int main() {
  using augur::Code;
  using augur::host::PmixBootstrap;
  if (!PmixBootstrap::launched_by_pmix()) {
    std::fprintf(stderr, "pmix_bootstrap_probe: not started by a PMIx launcher (run it with mpirun)\n");
    return 2;
  }
  auto b = PmixBootstrap::init(std::chrono::seconds(60));
  if (!b.ok()) {
    std::fprintf(stderr, "pmix_bootstrap_probe: init: %s\n", b.status().to_string().c_str());
    return 1;
  }
  PmixBootstrap& boot = *b.value();
  const int rank = boot.rank();
  const int size = boot.size();
  if (const char* r = std::getenv("OMPI_COMM_WORLD_RANK")) check(std::atoi(r) == rank, rank, "rank differs from mpirun's");
  if (const char* n = std::getenv("OMPI_COMM_WORLD_SIZE")) check(std::atoi(n) == size, rank, "size differs from mpirun's");
  // All ranks on this one node: the placement names it and counts them (mpirun's
  // OMPI_COMM_WORLD_LOCAL_SIZE says the same).
  const augur::host::NodePlacement placed = boot.placement();
  check(!placed.node.empty(), rank, "no node name from PMIX_HOSTNAME");
  check(placed.local_size == size, rank, "PMIX_LOCAL_SIZE " + std::to_string(placed.local_size) + ", not " + std::to_string(size));
  if (const char* l = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE")) {
    check(std::atoi(l) == placed.local_size, rank, "local size differs from mpirun's");
  }

  check(boot.put("probe.v", value_of(rank, 0)).ok(), rank, "put");
  check(boot.put("probe.empty", "").ok(), rank, "put of an empty value");
  check(boot.put("probe.big", std::string(augur::host::kMaxValueBytes, static_cast<char>('a' + rank % 26))).ok(), rank,
        "put of the largest value");
  check(boot.put("probe.too-big", std::string(augur::host::kMaxValueBytes + 1, 'x')).code() == Code::kInvalidArgument, rank,
        "an oversized value is refused");
  check(boot.put("", "x").code() == Code::kInvalidArgument, rank, "an empty key is refused");
  check(boot.put(std::string(600, 'k'), "x").code() == Code::kInvalidArgument, rank, "an overlong key is refused");
  check(boot.fence().ok(), rank, "fence");
  for (int p = 0; p < size; ++p) {
    auto v = boot.get(p, "probe.v");
    check(v.ok() && v.value() == value_of(p, 0), rank, "value of rank " + std::to_string(p));
    auto e = boot.get(p, "probe.empty");
    check(e.ok() && e.value().empty(), rank, "empty value of rank " + std::to_string(p));
    auto g = boot.get(p, "probe.big");
    check(g.ok() && g.value() == std::string(augur::host::kMaxValueBytes, static_cast<char>('a' + p % 26)), rank,
          "largest value of rank " + std::to_string(p));
    check(boot.get(p, "probe.never").status().code() == Code::kNotFound, rank, "a key never put is not found");
  }
  check(boot.get(size, "probe.v").status().code() == Code::kInvalidArgument, rank, "a rank outside the job is refused");
  check(boot.put("probe.v1", value_of(rank, 1)).ok(), rank, "put, second round");
  check(boot.fence().ok(), rank, "fence, second round");
  for (int p = 0; p < size; ++p) {
    auto v = boot.get(p, "probe.v1");
    check(v.ok() && v.value() == value_of(p, 1), rank, "second-round value of rank " + std::to_string(p));
  }
  int dead = -2;
  check(boot.check_alive(&dead).ok() && dead == -1, rank, "check_alive while every rank lives");
  check(boot.fence().ok(), rank, "last fence");
  // What the event handler does with an abnormal end the server reports (the servers here end
  // the job themselves before sending one): check_alive fails naming the rank, and the first
  // report is the one kept.
  const int victim = (rank + 1) % size;
  boot.on_event(-7, victim, "PROC-ABORTED");  // PMIX_ERR_PROC_ABORTED
  boot.on_event(-7, rank, "a second report");
  augur::Status failed = boot.check_alive(&dead);
  check(failed.code() == Code::kPeerFailure, rank, "check_alive after a reported abort");
  check(failed.to_string().find("PROC-ABORTED for rank " + std::to_string(victim)) != std::string::npos, rank,
        "the report names the event and the rank: " + failed.to_string());
  check(dead == (victim == rank ? -1 : victim), rank, "check_alive names the dead rank");
  if (rank == 0) std::printf("pmix_bootstrap_probe (%d ranks): %s\n", size, failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
