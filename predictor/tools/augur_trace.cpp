// augur-trace: measure how predictable a recorded MPI program is (docs/predictor.md).
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "augur/predictor/replay.h"

namespace {

using augur::predictor::ReplayOptions;

constexpr int kExitInput = 2;  // bad usage or bad input
constexpr int kExitFailed = 1;

const char* const kUsage =
    "usage: augur-trace replay [options] FILE...\n"
    "  --predictor NAME|all   predictor to run (repeatable, comma lists allowed; default all):\n"
    "                         lru fifo lfu single-cycle tagging tag-cycle tag-bettercycle\n"
    "                         two-level adaptive top-k match\n"
    "  --window K             set size of lru/fifo/lfu and k of top-k (default 4)\n"
    "  --init-min N           initialization phase: first cycle spans >= N calls (default 6; 0: off)\n"
    "  --match-min N          match: latest calls that must recur together before what followed is (default 6)\n"
    "  --offer-previous       offer the previous call while a cycle forms (default: abstain)\n"
    "  --resync               after a miss, first try to resume the broken cycle (augur)\n"
    "  --start-sweep N        also start each predictor at each of the first N calls (Sec. 6.6)\n"
    "  --json                 print a JSON object keyed by predictor name\n"
    "  --plot FILE.png        plot hit ratio vs window size for lru/fifo/lfu (needs gnuplot)\n"
    "  --max-window K         largest window in the plot (default 32)\n"
    "FILE is an augur trace (docs/trace-format.md), plain or gzip. Exit 2 on bad input.\n";

bool parse_size(std::string_view s, std::size_t& out) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

int usage_error(const std::string& what) {
  std::fprintf(stderr, "augur-trace: %s\n%s", what.c_str(), kUsage);
  return kExitInput;
}

int plot(const std::vector<std::string>& files, ReplayOptions opts, const std::string& png,
         std::size_t max_window) {
  opts.predictors = {"lru", "fifo", "lfu"};
  opts.start_sweep = 0;
  const std::string dat = png + ".dat";
  std::FILE* f = std::fopen(dat.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "augur-trace: %s: %s\n", dat.c_str(), std::strerror(errno));
    return kExitFailed;
  }
  std::fprintf(f, "# window lru fifo lfu (hit ratio averaged over ranks)\n");
  for (std::size_t k = 1; k <= max_window; ++k) {
    opts.predictor_options.window = k;
    auto r = augur::predictor::replay(files, opts);
    if (!r.ok()) {
      std::fclose(f);
      std::fprintf(stderr, "augur-trace: %s\n", r.status().message().c_str());
      return kExitInput;
    }
    std::fprintf(f, "%zu", k);
    for (const auto& p : r->predictors) std::fprintf(f, " %.6f", p.hit_ratio.avg);
    std::fprintf(f, "\n");
  }
  std::fclose(f);
  const std::string gp = png + ".gp";
  f = std::fopen(gp.c_str(), "w");
  if (f == nullptr) return kExitFailed;
  std::fprintf(f,
               "set terminal pngcairo size 800,500 noenhanced\nset output '%s'\n"
               "set xlabel 'window size k'\nset ylabel 'hit ratio (avg over ranks)'\n"
               "set yrange [0:1.05]\nset key bottom right\nset grid\n"
               "plot '%s' using 1:2 with linespoints title 'LRU', "
               "'' using 1:3 with linespoints title 'FIFO', "
               "'' using 1:4 with linespoints title 'LFU'\n",
               png.c_str(), dat.c_str());
  std::fclose(f);
  const std::string cmd = "gnuplot '" + gp + "'";
  if (std::system(cmd.c_str()) != 0) {
    // pngcairo is missing from some gnuplot builds; the plain png terminal is always there.
    std::string fallback = "sed -i 's/pngcairo/png/' '" + gp + "' && gnuplot '" + gp + "'";
    if (std::system(fallback.c_str()) != 0) {
      std::fprintf(stderr, "augur-trace: gnuplot failed (is gnuplot-nox installed?)\n");
      return kExitFailed;
    }
  }
  std::fprintf(stderr, "augur-trace: wrote %s\n", png.c_str());
  return 0;
}

int replay_main(int argc, char** argv) {
  ReplayOptions opts;
  std::vector<std::string> files;
  bool json = false;
  std::string png;
  std::size_t max_window = 32;
  for (int i = 0; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&](std::string_view flag) -> const char* {
      if (i + 1 >= argc) return nullptr;
      (void)flag;
      return argv[++i];
    };
    std::size_t n = 0;
    if (a == "--json") {
      json = true;
    } else if (a == "--offer-previous") {
      opts.predictor_options.offer_previous_while_forming = true;
    } else if (a == "--resync") {
      opts.predictor_options.resync = true;
    } else if (a == "--predictor") {
      const char* v = value(a);
      if (v == nullptr) return usage_error("--predictor needs a name");
      std::string_view list = v;
      while (!list.empty()) {
        const std::size_t comma = list.find(',');
        const std::string_view name = list.substr(0, comma);
        if (name != "all") opts.predictors.emplace_back(name);
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
      }
    } else if (a == "--window" || a == "--start-sweep" || a == "--init-min" || a == "--max-window" ||
               a == "--match-min") {
      const char* v = value(a);
      if (v == nullptr || !parse_size(v, n)) return usage_error(std::string(a) + " needs a number");
      if (a == "--window") {
        if (n == 0) return usage_error("--window must be at least 1");
        opts.predictor_options.window = n;
      } else if (a == "--start-sweep") {
        opts.start_sweep = n;
      } else if (a == "--init-min") {
        opts.predictor_options.init_min_length = static_cast<std::uint32_t>(n);
      } else if (a == "--match-min") {
        if (n == 0 || n > 64) return usage_error("--match-min must be 1..64");
        opts.predictor_options.match_min = static_cast<std::uint32_t>(n);
      } else {
        max_window = n;
      }
    } else if (a == "--plot") {
      const char* v = value(a);
      if (v == nullptr) return usage_error("--plot needs a file name");
      png = v;
    } else if (a.starts_with("--")) {
      return usage_error("unknown option " + std::string(a));
    } else {
      files.emplace_back(a);
    }
  }
  if (files.empty()) return usage_error("no trace files given");
  if (isatty(STDERR_FILENO) != 0) {
    opts.progress = [](const std::string& path, std::uint64_t calls) {
      std::fprintf(stderr, "\r%s: %llu calls", path.c_str(), static_cast<unsigned long long>(calls));
    };
  }
  auto r = augur::predictor::replay(files, opts);
  if (opts.progress) std::fprintf(stderr, "\r\033[K");
  if (!r.ok()) {
    std::fprintf(stderr, "augur-trace: %s\n", r.status().message().c_str());
    return kExitInput;  // unreadable, malformed or missing input, or an unknown predictor
  }
  const std::string out = json ? augur::predictor::format_json(*r) : augur::predictor::format_table(*r);
  std::fputs(out.c_str(), stdout);
  if (!png.empty()) return plot(files, opts, png, max_window);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (argc < 2 || std::string_view(argv[1]) != "replay") {
    return usage_error(argc < 2 ? "missing subcommand" : "unknown subcommand " + std::string(argv[1]));
  }
  return replay_main(argc - 2, argv + 2);
}
