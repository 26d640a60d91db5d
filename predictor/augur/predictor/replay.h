// Replays recorded traces through predictors: the numbers of the paper's Figures 5-13.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "augur/predictor/predictor.h"
#include "augur/status.h"

namespace augur::predictor {

struct ReplayOptions {
  std::vector<std::string> predictors;  // names; empty means all
  Options predictor_options;
  // Sensitivity study (Sec. 6.6): also run each predictor starting at each of the first N calls.
  std::size_t start_sweep = 0;
  // Called every `progress_every` calls of a file with (path, calls so far); may be empty.
  std::function<void(const std::string&, std::uint64_t)> progress;
  std::uint64_t progress_every = 1U << 20;
};

struct Spread {
  double avg = 0, min = 0, max = 0;
};

struct PredictorReport {
  std::string name;
  Spread hit_ratio;              // over ranks
  bool abstains = false;
  double coverage = 0;           // offered / calls, pooled over ranks
  double precision = 0;          // hits / offered, pooled over ranks
  std::size_t memory_tuples = 0; // max over ranks
  std::uint64_t calls = 0;       // over all ranks
  std::vector<double> per_rank;  // hit ratio per rank that had calls, in file order
  // Sensitivity study: hit ratio averaged over ranks, spread over starting calls; for the cycle
  // predictors also without the initialization phase (the paper's Figure 13).
  std::optional<Spread> start_sweep;
  std::optional<Spread> start_sweep_no_init;
};

struct ReplayReport {
  std::size_t ranks = 0;         // files with at least one call
  std::size_t empty_ranks = 0;   // files with a header and no calls
  std::uint64_t calls = 0;
  std::vector<PredictorReport> predictors;
};

Result<ReplayReport> replay(std::span<const std::string> files, const ReplayOptions& opts);

// The aligned table and the JSON object of `augur-trace replay`.
std::string format_table(const ReplayReport& r);
std::string format_json(const ReplayReport& r);

}  // namespace augur::predictor
