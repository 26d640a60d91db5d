// Cost of predict+observe per receive call, per predictor, on a long cyclic trace (cycle 200,
// 1% noise), as the receive path would pay it. Median over repetitions: see docs/predictor.md.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "augur/predictor/predictor.h"

namespace {

using augur::predictor::CallId;
using augur::predictor::Event;
using augur::predictor::RecvCall;
using augur::predictor::SiteId;

constexpr std::size_t kTrace = std::size_t{1} << 16;  // a power of two: the index wraps by mask
constexpr CallId kCycle = 200;
constexpr SiteId kSites = 8;

// Cycle of 200 calls (at 8 call sites, as a loop body with 8 receives would have); 1% of the
// calls are replaced by one of 1000 other calls.
const std::vector<Event>& trace() {
  static const std::vector<Event> t = [] {
    std::mt19937 rng(42);
    std::uniform_int_distribution<int> pct(0, 99);
    std::uniform_int_distribution<CallId> other(kCycle, kCycle + 999);
    std::vector<Event> v(kTrace);
    for (std::size_t i = 0; i < kTrace; ++i) {
      const auto c = static_cast<CallId>(i % kCycle);
      v[i] = pct(rng) == 0 ? Event{other(rng), c % kSites} : Event{c, c % kSites};
    }
    return v;
  }();
  return t;
}

void BM_PredictObserve(benchmark::State& state, const std::string& name, std::size_t window,
                       bool resync) {
  augur::predictor::Options o;
  o.window = window;
  o.resync = resync;
  auto made = augur::predictor::make_predictor(name, o);
  if (!made.ok()) {
    state.SkipWithError(made.status().message().c_str());
    return;
  }
  augur::predictor::Predictor& p = **made;
  const std::vector<Event>& t = trace();
  for (const Event& e : t) p.observe(e);  // warm: tables at steady-state size
  std::size_t i = 0;
  std::uint64_t hits = 0;
  for (auto _ : state) {
    const Event e = t[i++ & (kTrace - 1)];
    const bool hit = p.covers(e);  // predict, and compare
    hits += hit ? 1U : 0U;
    p.observe(e);
  }
  state.counters["hit_ratio"] = benchmark::Counter(
      static_cast<double>(hits) / static_cast<double>(state.iterations()));
  state.counters["memory_tuples"] = static_cast<double>(p.memory_tuples());
}

// Interning the 6-tuple to a dense id: paid once per receive, before any predictor.
void BM_Intern(benchmark::State& state) {
  augur::predictor::Interner in;
  std::vector<RecvCall> calls(kTrace);
  const std::vector<Event>& t = trace();
  for (std::size_t i = 0; i < kTrace; ++i) {
    calls[i].source = static_cast<std::int32_t>(t[i].call % 64);
    calls[i].tag = 7;
    calls[i].count = 1024;
    calls[i].buffer = 0x7f0000000000ULL + std::uint64_t{t[i].call} * 8192;
    calls[i].site = 0x401000 + t[i].site * 0x40;
  }
  for (const RecvCall& c : calls) (void)in.intern(c);
  std::size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(in.intern(calls[i++ & (kTrace - 1)]));
}

// `smoke`: one short repetition each, for the ctest smoke run.
void register_all(bool smoke) {
  const struct {
    const char* name;
    std::size_t window;
    bool resync;
  } runs[] = {{"single-cycle", 1, false}, {"single-cycle", 1, true}, {"tag-bettercycle", 1, false},
              {"tag-bettercycle", 1, true}, {"tag-cycle", 1, false},  {"tagging", 1, false},
              {"two-level", 1, true},       {"adaptive", 1, true},    {"top-k", 4, true},
              {"lru", 16, false},           {"fifo", 16, false},      {"lfu", 16, false},
              {"lru", 200, false},          {"lfu", 200, false},      {"match", 1, false}};
  for (const auto& r : runs) {
    const std::string label = std::string(r.name) + "/k=" + std::to_string(r.window) +
                              (r.resync ? "/resync" : "");
    benchmark::RegisterBenchmark(("predict_observe/" + label).c_str(), BM_PredictObserve, r.name,
                                 r.window, r.resync)
        ->Repetitions(smoke ? 1 : 5)
        ->ReportAggregatesOnly(!smoke)
        ->MinTime(smoke ? 0.001 : 0.2);
  }
  benchmark::RegisterBenchmark("intern_6tuple", BM_Intern)
      ->Repetitions(smoke ? 1 : 5)
      ->ReportAggregatesOnly(!smoke)
      ->MinTime(smoke ? 0.001 : 0.2);
}

}  // namespace

int main(int argc, char** argv) {
  bool smoke = false;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--smoke") {
      smoke = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  register_all(smoke);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
