// End to end: small MPI programs run under Open MPI's mpirun with libaugur_trace preloaded; their
// traces are replayed and must show the paper's qualitative findings.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "augur/predictor/replay.h"
#include "augur/predictor/trace.h"
#include "temp_dir.h"

namespace augur::predictor {
namespace {

namespace fs = std::filesystem;
constexpr int kRanks = 4;
constexpr int kIters = 300;

class MpiTrace : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);  // CI runs as root
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  }

  // Runs the example under mpirun with recorder `lib`; sets cmd_ and out_ (its output); returns
  // its exit status.
  int launch(const std::string& app, int ranks, const std::string& lib, const std::string& extra = "") {
    const std::string log = (dir_ / "mpirun.log").string();
    cmd_ = std::string(AUGUR_MPIEXEC) + " --oversubscribe --bind-to none -np " + std::to_string(ranks) + extra +
           " -x LD_PRELOAD=" + lib + " -x AUGUR_TRACE_DIR=" + dir_.string() + " " + AUGUR_EXAMPLE_DIR +
           "/augur-example-" + app + " " + std::to_string(kIters) + " >" + log + " 2>&1";
    const int raw = std::system(cmd_.c_str());
    std::ifstream in(log);
    out_.assign((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  }

  // Runs the example under mpirun with the recorder; returns the per-rank trace files.
  std::vector<std::string> record(const std::string& app, int ranks = kRanks) {
    EXPECT_EQ(launch(app, ranks, AUGUR_TRACE_LIB), 0) << cmd_ << "\n" << out_;
    std::vector<std::string> files;
    for (int r = 0; r < ranks; ++r) {
      const fs::path p = dir_ / ("augur-trace." + std::to_string(r) + ".txt");
      EXPECT_TRUE(fs::exists(p)) << p;
      files.push_back(p.string());
    }
    return files;
  }

  static std::map<std::string, PredictorReport> replay_all(const std::vector<std::string>& files,
                                                           std::size_t window) {
    ReplayOptions o;
    o.predictor_options.window = window;
    auto r = replay(files, o);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    std::map<std::string, PredictorReport> by_name;
    if (r.ok()) {
      for (auto& p : r->predictors) by_name[p.name] = p;
    }
    return by_name;
  }

  // The report of predictor `name`. Not operator[]: it would make an all-zero report for a
  // missing name, which passes every "== 0" check. A missing one fails the test, and the report
  // returned then fails every comparison too (NaN ratios).
  static const PredictorReport& at(const std::map<std::string, PredictorReport>& rep, const std::string& name) {
    if (auto it = rep.find(name); it != rep.end()) return it->second;
    ADD_FAILURE() << "no report for predictor \"" << name << "\" (" << rep.size() << " reports)";
    static const PredictorReport missing = [] {
      constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
      PredictorReport r;
      r.name = "missing";
      r.hit_ratio = {kNaN, kNaN, kNaN};
      r.memory_tuples = std::numeric_limits<std::size_t>::max();
      r.per_rank.assign(kRanks, kNaN);
      return r;
    }();
    return missing;
  }

  std::string cmd_, out_;

  // Calls of one rank's trace, with the rank header checked.
  static std::vector<RecvCall> calls_of(const std::string& path, int rank) {
    std::vector<RecvCall> calls;
    auto reader = TraceReader::open(path);
    EXPECT_TRUE(reader.ok()) << reader.status().to_string();
    if (!reader.ok()) return calls;
    RecvCall c;
    while (true) {
      auto more = reader->next(c);
      EXPECT_TRUE(more.ok()) << more.status().to_string();
      if (!more.ok() || !more.value()) break;
      calls.push_back(c);
    }
    EXPECT_EQ(reader->rank(), rank);
    EXPECT_EQ(reader->size(), kRanks);
    return calls;
  }
};

// The recorder built for augur's mpi.h preloaded into an Open MPI program: its wrappers would
// truncate Open MPI's pointer handles (a crash in the first MPI_Recv). It refuses at load.
TEST_F(MpiTrace, TheRecorderOfAnotherMpiIsRefusedAtLoadWithAClearError) {
  // In a sanitizer build it needs the sanitizer's runtime first (AUGUR_SANITIZER_PRELOAD).
  const int rc = launch("ring", 2, std::string(AUGUR_SANITIZER_PRELOAD) + AUGUR_TRACE_MPI_LIB);
  EXPECT_NE(rc, 0) << out_;
  EXPECT_NE(out_.find("augur_trace: this recorder is built for augur's mpi.h"), std::string::npos) << out_;
  EXPECT_NE(out_.find("Open MPI"), std::string::npos) << out_;
  EXPECT_EQ(out_.find("Segmentation fault"), std::string::npos) << out_;
  EXPECT_FALSE(fs::exists(dir_ / "augur-trace.0.txt"));
}

TEST_F(MpiTrace, RingIsOneCallRepeated) {
  const auto files = record("ring");
  for (int r = 0; r < kRanks; ++r) {
    const auto calls = calls_of(files[static_cast<std::size_t>(r)], r);
    ASSERT_EQ(calls.size(), std::size_t{kIters});
    EXPECT_EQ(calls[0].kind, CallKind::kRecv);
    EXPECT_EQ(calls[0].source, (r + kRanks - 1) % kRanks);
    EXPECT_EQ(calls[0].tag, 1);
    EXPECT_NE(calls[0].site, 0U);
  }
  const auto rep = replay_all(files, 1);
  EXPECT_GT(at(rep, "single-cycle").hit_ratio.min, 0.97);  // 7 misses to find the first cycle
  EXPECT_GT(at(rep, "lru").hit_ratio.min, 0.99);           // window 1 >= cycle length 1
  EXPECT_EQ(at(rep, "single-cycle").memory_tuples, 1U);
}

TEST_F(MpiTrace, PesHaloExchangeAlternatesTwoGhostRows) {
  const auto files = record("pes");
  // End ranks have one neighbour (MPI_PROC_NULL receives are not recorded): cycle of 1; the
  // interior ones alternate two ghost rows: cycle of 2.
  EXPECT_EQ(calls_of(files[0], 0).size(), std::size_t{kIters});
  EXPECT_EQ(calls_of(files[1], 1).size(), std::size_t{2 * kIters});
  const auto rep = replay_all(files, 1);
  EXPECT_GT(at(rep, "single-cycle").hit_ratio.min, 0.97);
  EXPECT_GT(at(rep, "tag-bettercycle").hit_ratio.min, 0.97);
  EXPECT_EQ(at(rep, "lru").hit_ratio.min, 0.0);  // interior ranks: window 1 < cycle length 2
  EXPECT_EQ(at(rep, "fifo").hit_ratio.min, 0.0);
  EXPECT_EQ(at(rep, "single-cycle").memory_tuples, 2U);
}

TEST_F(MpiTrace, M3MasterGathersAtOneSite) {
  const auto files = record("m3");
  const auto master = calls_of(files[0], 0);
  ASSERT_EQ(master.size(), std::size_t{kIters * (kRanks - 1)});
  EXPECT_EQ(calls_of(files[1], 1).size(), std::size_t{kIters + 1});  // B once, then A slices
  const auto rep = replay_all(files, 2);
  EXPECT_GT(at(rep, "single-cycle").hit_ratio.min, 0.95);
  // The master receives from 3 slaves at one call site: Tagging never hits there.
  EXPECT_EQ(at(rep, "tagging").hit_ratio.min, 0.0);
  EXPECT_GT(at(rep, "tag-bettercycle").hit_ratio.min, 0.95);
  ASSERT_FALSE(at(rep, "lru").per_rank.empty());
  EXPECT_EQ(at(rep, "lru").per_rank[0], 0.0);  // window 2 < master's cycle length 3
}

TEST_F(MpiTrace, NbodyAllgatherCyclesThroughBlocks) {
  const auto files = record("nbody");
  EXPECT_EQ(calls_of(files[2], 2).size(), std::size_t{kIters * (kRanks - 1)});
  const auto rep = replay_all(files, 2);
  EXPECT_GT(at(rep, "single-cycle").hit_ratio.min, 0.97);
  EXPECT_GT(at(rep, "two-level").hit_ratio.min, 0.97);
  EXPECT_EQ(at(rep, "lru").hit_ratio.max, 0.0);  // window 2 < cycle length 3
  EXPECT_EQ(at(rep, "tagging").hit_ratio.max, 0.0);
  EXPECT_GT(at(rep, "lfu").hit_ratio.min, 0.3);  // LFU keeps one block: better than LRU
  EXPECT_EQ(at(rep, "single-cycle").memory_tuples, 3U);
}

#ifdef AUGUR_HAVE_FORTRAN_EXAMPLE
TEST_F(MpiTrace, FortranEntryPointsAreRecorded) {
  const auto files = record("ring-f");
  for (int r = 0; r < kRanks; ++r) {
    const auto calls = calls_of(files[static_cast<std::size_t>(r)], r);
    ASSERT_EQ(calls.size(), std::size_t{2 * kIters});  // mpi_irecv_ then mpi_recv_
    EXPECT_EQ(calls[0].kind, CallKind::kIrecv);
    EXPECT_EQ(calls[0].tag, 5);
    EXPECT_EQ(calls[1].kind, CallKind::kRecv);
    EXPECT_EQ(calls[1].tag, 6);
    EXPECT_NE(calls[0].site, calls[1].site);
  }
  const auto rep = replay_all(files, 1);
  EXPECT_GT(at(rep, "single-cycle").hit_ratio.min, 0.97);
  EXPECT_GT(at(rep, "tagging").hit_ratio.min, 0.99);
}
#endif

}  // namespace
}  // namespace augur::predictor
