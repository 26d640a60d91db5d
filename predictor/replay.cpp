#include "augur/predictor/replay.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string_view>

#include "augur/predictor/trace.h"

namespace augur::predictor {

namespace {

struct Runner {
  std::unique_ptr<Predictor> p;
  std::uint64_t start = 0;
  std::uint64_t calls = 0, offered = 0, hits = 0;

  void feed(std::uint64_t index, Event e) {
    if (index < start) return;
    ++calls;
    if (p->offers(e.site)) ++offered;
    if (p->covers(e)) ++hits;
    p->observe(e);
  }
  [[nodiscard]] double ratio() const { return calls == 0 ? 0.0 : static_cast<double>(hits) / static_cast<double>(calls); }
};

bool has_init_phase(std::string_view n) {
  return n == "single-cycle" || n == "tag-cycle" || n == "tag-bettercycle";
}

Spread spread(const std::vector<double>& v) {
  Spread s;
  if (v.empty()) return s;
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.avg = sum / static_cast<double>(v.size());
  return s;
}

// Per predictor, accumulated over ranks.
struct Acc {
  std::uint64_t calls = 0, offered = 0, hits = 0;
  std::size_t memory = 0;
  std::vector<double> per_rank;
  std::vector<std::vector<double>> sweep, sweep_no_init;  // [start][rank]
};

}  // namespace

Result<ReplayReport> replay(std::span<const std::string> files, const ReplayOptions& opts) {
  std::vector<std::string> names = opts.predictors;
  if (names.empty()) {
    for (std::string_view n : predictor_names()) names.emplace_back(n);
  }
  Options no_init = opts.predictor_options;
  no_init.init_min_length = 0;
  for (const auto& n : names) AUGUR_RETURN_IF_ERROR(make_predictor(n, no_init).status());
  if (files.empty()) return Status(Code::kInvalidArgument, "no trace files given");

  std::vector<Acc> acc(names.size());
  for (Acc& a : acc) {
    a.sweep.resize(opts.start_sweep);
    a.sweep_no_init.resize(opts.start_sweep);
  }
  ReplayReport report;
  for (const std::string& path : files) {
    AUGUR_ASSIGN_OR_RETURN(TraceReader reader, TraceReader::open(path));
    // One pass per file feeds every predictor and every starting point: traces stream.
    std::vector<Runner> main, sweep, sweep_no_init;
    for (const auto& n : names) {
      main.push_back({make_predictor(n, opts.predictor_options).value()});
      for (std::uint64_t s = 0; s < opts.start_sweep; ++s) {
        sweep.push_back({make_predictor(n, opts.predictor_options).value(), s});
        if (has_init_phase(n)) sweep_no_init.push_back({make_predictor(n, no_init).value(), s});
      }
    }
    Interner interner;
    RecvCall call;
    std::uint64_t i = 0;
    while (true) {
      AUGUR_ASSIGN_OR_RETURN(bool more, reader.next(call));
      if (!more) break;
      const Event e = interner.intern(call);
      for (Runner& r : main) r.feed(i, e);
      for (Runner& r : sweep) r.feed(i, e);
      for (Runner& r : sweep_no_init) r.feed(i, e);
      ++i;
      if (opts.progress && i % opts.progress_every == 0) opts.progress(path, i);
    }
    if (i == 0) {
      ++report.empty_ranks;  // a rank that posted no receive: no ratio to average
      continue;
    }
    ++report.ranks;
    report.calls += i;
    std::size_t sw = 0, swn = 0;
    for (std::size_t k = 0; k < names.size(); ++k) {
      Acc& a = acc[k];
      a.calls += main[k].calls;
      a.offered += main[k].offered;
      a.hits += main[k].hits;
      a.memory = std::max(a.memory, main[k].p->memory_tuples());
      a.per_rank.push_back(main[k].ratio());
      for (std::size_t s = 0; s < opts.start_sweep; ++s) {
        const Runner& r = sweep[sw++];
        if (r.calls > 0) a.sweep[s].push_back(r.ratio());
        if (has_init_phase(names[k])) {
          const Runner& rn = sweep_no_init[swn++];
          if (rn.calls > 0) a.sweep_no_init[s].push_back(rn.ratio());
        }
      }
    }
  }
  if (report.ranks == 0 && report.empty_ranks == 0) {
    return Status(Code::kInvalidArgument, "no trace files given");
  }

  for (std::size_t k = 0; k < names.size(); ++k) {
    const Acc& a = acc[k];
    PredictorReport p;
    p.name = names[k];
    p.hit_ratio = spread(a.per_rank);
    p.abstains = abstains(names[k]);
    p.coverage = a.calls == 0 ? 0 : static_cast<double>(a.offered) / static_cast<double>(a.calls);
    p.precision = a.offered == 0 ? 0 : static_cast<double>(a.hits) / static_cast<double>(a.offered);
    p.memory_tuples = a.memory;
    p.calls = a.calls;
    p.per_rank = a.per_rank;
    auto sweep_spread = [](const std::vector<std::vector<double>>& by_start) {
      std::vector<double> avgs;
      for (const auto& ranks : by_start) {
        if (!ranks.empty()) avgs.push_back(spread(ranks).avg);
      }
      return spread(avgs);
    };
    if (opts.start_sweep > 0) {
      p.start_sweep = sweep_spread(a.sweep);
      if (has_init_phase(names[k])) p.start_sweep_no_init = sweep_spread(a.sweep_no_init);
    }
    report.predictors.push_back(std::move(p));
  }
  return report;
}

namespace {

std::string fmt(int width, int precision, double x) {
  char b[64];
  std::snprintf(b, sizeof b, "%*.*f", width, precision, x);
  return b;
}

std::string json_spread(const Spread& s) {
  return "{\"avg\": " + fmt(0, 6, s.avg) + ", \"min\": " + fmt(0, 6, s.min) +
         ", \"max\": " + fmt(0, 6, s.max) + "}";
}

}  // namespace

std::string format_table(const ReplayReport& r) {
  char line[256];
  std::string out;
  std::snprintf(line, sizeof line, "%zu ranks with calls, %zu without, %llu calls\n", r.ranks,
                r.empty_ranks, static_cast<unsigned long long>(r.calls));
  out += line;
  const bool sweep = !r.predictors.empty() && r.predictors.front().start_sweep.has_value();
  std::snprintf(line, sizeof line, "%-16s %7s %7s %7s %8s %9s %8s%s\n", "predictor", "hit_avg",
                "hit_min", "hit_max", "coverage", "precision", "memory",
                sweep ? "  sweep_avg sweep_min no_init_avg" : "");
  out += line;
  for (const auto& p : r.predictors) {
    const std::string cov = p.abstains ? fmt(8, 4, p.coverage) : std::string(8, ' ').replace(7, 1, "-");
    const std::string pre = p.abstains ? fmt(9, 4, p.precision) : std::string(9, ' ').replace(8, 1, "-");
    std::snprintf(line, sizeof line, "%-16s %7.4f %7.4f %7.4f %s %s %8zu", p.name.c_str(),
                  p.hit_ratio.avg, p.hit_ratio.min, p.hit_ratio.max, cov.c_str(), pre.c_str(),
                  p.memory_tuples);
    out += line;
    if (p.start_sweep) {
      std::snprintf(line, sizeof line, "  %9.4f %9.4f", p.start_sweep->avg, p.start_sweep->min);
      out += line;
      out += p.start_sweep_no_init ? " " + fmt(11, 4, p.start_sweep_no_init->avg) : "           -";
    }
    out += '\n';
  }
  return out;
}

std::string format_json(const ReplayReport& r) {
  std::string out = "{";
  bool first = true;
  for (const auto& p : r.predictors) {
    out += first ? "\n  " : ",\n  ";
    first = false;
    out += "\"" + p.name + "\": {\"hit_ratio\": " + json_spread(p.hit_ratio) +
           ", \"memory_tuples\": " + std::to_string(p.memory_tuples) +
           ", \"calls\": " + std::to_string(p.calls) + ", \"ranks\": " + std::to_string(r.ranks);
    if (p.abstains) {
      out += ", \"coverage\": " + fmt(0, 6, p.coverage) + ", \"precision\": " + fmt(0, 6, p.precision);
    }
    if (p.start_sweep) out += ", \"start_sweep\": " + json_spread(*p.start_sweep);
    if (p.start_sweep_no_init) out += ", \"start_sweep_no_init\": " + json_spread(*p.start_sweep_no_init);
    out += "}";
  }
  out += "\n}\n";
  return out;
}

}  // namespace augur::predictor
