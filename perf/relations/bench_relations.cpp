// augur-bench-relations: message assembly (pack) and disassembly (unpack) throughput for the
// paper's four representative redistributions of a 1024x1024 array of doubles over four nodes
// (node 0 -> node 0), every encoding against memcpy, a plain two-level stride loop for the same
// access pattern, and Open MPI's MPI_Pack/MPI_Unpack, measured interleaved in one run.
//
//   augur-bench-relations [--rounds N] [--json] [--plot FILE.png]
// --json prints the JSON document on stdout and the table on stderr.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "augur/relations/encoding.h"
#include "augur/relations/executor.h"
#include "augur/relations/redistribution.h"
#include "openmpi_baseline.h"

namespace {

using augur::bench::Strided2;
using namespace augur::relations;

// The plain copy loops a compiler generates for a known two-level pattern: strides are template
// arguments, so the compiler sees `out[i] = src[4 * i]` exactly as if written by hand.
template <std::uint64_t kOn, std::uint64_t kOs, std::uint64_t kIn, std::uint64_t kIs>
__attribute__((noinline)) void StridePack(const double* src, double* out) {
  for (std::uint64_t o = 0; o < kOn; ++o) {
    const double* base = src + o * kOs;
    for (std::uint64_t i = 0; i < kIn; ++i) *out++ = base[i * kIs];
  }
}
template <std::uint64_t kOn, std::uint64_t kOs, std::uint64_t kIn, std::uint64_t kIs>
__attribute__((noinline)) void StrideUnpack(const double* in, double* dst) {
  for (std::uint64_t o = 0; o < kOn; ++o) {
    double* base = dst + o * kOs;
    for (std::uint64_t i = 0; i < kIn; ++i) base[i * kIs] = *in++;
  }
}
using PackFn = void (*)(const double*, double*);
using UnpackFn = void (*)(const double*, double*);

struct Case {
  const char* name;
  Redistribution redist;
  Strided2 src;  // the source access pattern in pack order (for the stride loop and Open MPI)
  Strided2 dst;  // the destination access pattern in unpack order
  PackFn stride_pack;      // the same two patterns as compiled loops
  UnpackFn stride_unpack;
};


std::vector<Case> PaperCases() {
  const DimDist s = DimDist::Star(), b = DimDist::Block(4), c = DimDist::Cyclic(4);
  auto make = [](std::vector<DimDist> src, std::vector<DimDist> dst, std::vector<std::size_t> order) {
    Redistribution r;
    r.shape = {1024, 1024};
    r.src.dims = std::move(src);
    r.dst.dims = std::move(dst);
    r.dst.storage_order = std::move(order);
    return r;
  };
  // Local arrays are column-major (HPF). Strides in doubles, derived by hand from the
  // distributions and checked against the relation before anything is timed.
  return {
      {"(BLOCK,*)->(*,BLOCK)", make({b, s}, {s, b}, {}), {1, 0, 65536, 1}, {256, 1024, 256, 1},
       StridePack<1, 0, 65536, 1>, StrideUnpack<256, 1024, 256, 1>},
      {"(BLOCK,*)->(CYCLIC,*)", make({b, s}, {c, s}, {}), {1, 0, 65536, 4}, {1024, 256, 64, 1},
       StridePack<1, 0, 65536, 4>, StrideUnpack<1024, 256, 64, 1>},
      {"(CYCLIC,*)->(BLOCK,*)", make({c, s}, {b, s}, {}), {1024, 256, 64, 1}, {1, 0, 65536, 4},
       StridePack<1024, 256, 64, 1>, StrideUnpack<1, 0, 65536, 4>},
      {"(*,CYCLIC)->(CYCLIC,*)T", make({s, c}, {c, s}, {1, 0}), {1, 0, 65536, 4}, {256, 4, 256, 1024},
       StridePack<1, 0, 65536, 4>, StrideUnpack<256, 4, 256, 1024>},
  };
}

struct Alt {
  std::string name;
  std::function<void()> pack;
  std::function<void()> unpack;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

double Seconds(const std::function<void()>& f, int reps) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
}

struct Row {
  std::string name;
  std::uint64_t tuples = 0;
  std::map<std::string, std::uint64_t> bytes;
  std::vector<std::string> alts;  // measurement order for the table
  std::map<std::string, double> pack, unpack;
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "augur-bench-relations: %s\n", what.c_str());
  std::exit(1);
}

template <class T>
T Must(augur::Result<T> r, const char* what) {
  if (!r.ok()) Die(std::string(what) + ": " + r.status().to_string());
  return std::move(r).value();
}
void Must(const augur::Status& s, const char* what) {
  if (!s.ok()) Die(std::string(what) + ": " + s.to_string());
}

std::span<std::byte> Bytes(std::vector<double>& v) { return std::as_writable_bytes(std::span(v)); }

Row Measure(const Case& c, int rounds) {
  Row row;
  row.name = c.name;
  const Relation rel = Must(RedistributionRelation(c.redist, 0, 0), "inspector");
  row.tuples = rel.size();
  std::vector<double> src(rel.src_extent()), packed(rel.size()), dst(rel.dst_extent()),
      check(rel.size()), dcheck(rel.dst_extent());
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<double>(i) + 0.5;
  const int bytes = static_cast<int>(rel.payload_bytes());

  std::vector<EncodedRelation> enc;
  for (Encoding e : kAllEncodings) {
    enc.push_back(Must(EncodedRelation::Encode(rel, e), "encode"));
    row.bytes[std::string(EncodingName(e))] = enc.back().size_bytes();
  }
  // The reference: pack with AAPAIR; every alternative must produce the same bytes.
  std::vector<double> ref(rel.size()), dref(rel.dst_extent(), -1.0);
  Must(Pack(enc[0], std::as_bytes(std::span(src)), Bytes(ref)), "pack");
  Must(Unpack(enc[0], std::as_bytes(std::span(ref)), Bytes(dref)), "unpack");

  std::vector<Alt> alts;
  alts.push_back({"memcpy", [&] { std::memcpy(packed.data(), src.data(), packed.size() * sizeof(double)); },
                  [&] { std::memcpy(dst.data(), packed.data(), packed.size() * sizeof(double)); }});
  alts.push_back({"stride_loop", [&] { c.stride_pack(src.data(), packed.data()); },
                  [&] { c.stride_unpack(ref.data(), dst.data()); }});
  for (const EncodedRelation& e : enc) {
    alts.push_back({std::string(EncodingName(e.encoding())),
                    [&] { (void)Pack(e, std::as_bytes(std::span(src)), Bytes(packed)); },
                    [&] { (void)Unpack(e, std::as_bytes(std::span(ref)), Bytes(dst)); }});
  }
  std::shared_ptr<augur::bench::MpiPacker> mpi_src = augur::bench::MakeMpiPacker(c.src);
  std::shared_ptr<augur::bench::MpiPacker> mpi_dst = augur::bench::MakeMpiPacker(c.dst);
  if (mpi_src && mpi_dst) {
    alts.push_back({"openmpi", [&] { mpi_src->Pack(src.data(), packed.data(), bytes); },
                    [&] { mpi_dst->Unpack(ref.data(), bytes, dst.data()); }});
  }
  // Correctness first: every alternative except memcpy reproduces the reference exactly.
  for (const Alt& a : alts) {
    if (a.name == "memcpy") continue;
    std::fill(packed.begin(), packed.end(), -1.0);
    std::fill(dst.begin(), dst.end(), -1.0);
    a.pack();
    a.unpack();
    if (packed != ref) Die(std::string(c.name) + ": " + a.name + " pack differs from the relation");
    if (dst != dref) Die(std::string(c.name) + ": " + a.name + " unpack differs from the relation");
  }
  // Calibrate each alternative's repetitions so one sample lasts about kSampleSeconds (short
  // samples on a shared machine are mostly noise).
  constexpr double kSampleSeconds = 0.002;
  std::vector<int> pack_reps, unpack_reps;
  for (const Alt& a : alts) {
    a.pack();
    a.unpack();
    pack_reps.push_back(std::max(1, static_cast<int>(kSampleSeconds / Seconds(a.pack, 3))));
    unpack_reps.push_back(std::max(1, static_cast<int>(kSampleSeconds / Seconds(a.unpack, 3))));
  }
  // Interleaved rounds: every alternative once per round, rotating the start, medians at the end.
  std::map<std::string, std::vector<double>> pk, up;
  const double mb = static_cast<double>(bytes) / 1e6;
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t k = 0; k < alts.size(); ++k) {
      const std::size_t i = (k + static_cast<std::size_t>(r)) % alts.size();
      pk[alts[i].name].push_back(mb / Seconds(alts[i].pack, pack_reps[i]));
      up[alts[i].name].push_back(mb / Seconds(alts[i].unpack, unpack_reps[i]));
    }
  }
  for (const Alt& a : alts) {
    row.alts.push_back(a.name);
    row.pack[a.name] = Median(pk[a.name]);
    row.unpack[a.name] = Median(up[a.name]);
  }
  return row;
}

void PrintJson(const std::vector<Row>& rows) {
  std::printf("{\"relations\": [");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    std::printf("%s\n  {\"name\": \"%s\", \"tuples\": %llu, \"bytes\": {", i ? "," : "", r.name.c_str(),
                static_cast<unsigned long long>(r.tuples));
    bool first = true;
    for (Encoding e : kAllEncodings) {
      const std::string n(EncodingName(e));
      std::printf("%s\"%s\": %llu", first ? "" : ", ", n.c_str(),
                  static_cast<unsigned long long>(r.bytes.at(n)));
      first = false;
    }
    for (const char* which : {"pack_mbps", "unpack_mbps"}) {
      const auto& m = std::string(which) == "pack_mbps" ? r.pack : r.unpack;
      std::printf("}, \"%s\": {", which);
      first = true;
      for (const std::string& a : r.alts) {
        std::printf("%s\"%s\": %.1f", first ? "" : ", ", a.c_str(), m.at(a));
        first = false;
      }
    }
    std::printf("}}");
  }
  std::printf("\n]}\n");
}

double Ratio(const std::map<std::string, double>& m, const std::string& a, const std::string& b) {
  auto ia = m.find(a), ib = m.find(b);
  return ia == m.end() || ib == m.end() || ib->second == 0 ? 0.0 : ia->second / ib->second;
}

void PrintTable(FILE* out, const std::vector<Row>& rows, int rounds) {
  std::fprintf(out, "augur-bench-relations: 1024x1024 doubles, 4 nodes, node 0 -> node 0, %d interleaved "
              "rounds, median MB/s (1 MB = 1e6 bytes)\n\n", rounds);
  for (const Row& r : rows) {
    std::fprintf(out, "%s  tuples %llu  payload %llu bytes\n", r.name.c_str(),
                static_cast<unsigned long long>(r.tuples),
                static_cast<unsigned long long>(r.tuples * sizeof(double)));
    std::fprintf(out, "  %-12s %10s %11s %11s %12s %12s %12s %12s\n", "alternative", "bytes", "pack MB/s",
                "unpack MB/s", "pack/stride", "unpk/stride", "pack/ompi", "unpk/ompi");
    for (const std::string& a : r.alts) {
      auto b = r.bytes.find(a);
      const std::string size = b == r.bytes.end() ? "-" : std::to_string(b->second);
      std::fprintf(out, "  %-12s %10s %11.0f %11.0f %12.2f %12.2f %12.2f %12.2f\n", a.c_str(), size.c_str(),
                  r.pack.at(a), r.unpack.at(a), Ratio(r.pack, a, "stride_loop"),
                  Ratio(r.unpack, a, "stride_loop"), Ratio(r.pack, a, "openmpi"),
                  Ratio(r.unpack, a, "openmpi"));
    }
    std::fprintf(out, "\n");
  }
  std::fprintf(out, "targets: DMRLEC (or better) within 10%% of the stride loop, >= Open MPI, < 2048 bytes\n");
  for (const char* enc : {"DMRLEC", "NESTED"}) {
    for (const Row& r : rows) {
      const double ps = Ratio(r.pack, enc, "stride_loop"), us = Ratio(r.unpack, enc, "stride_loop");
      const double po = Ratio(r.pack, enc, "openmpi"), uo = Ratio(r.unpack, enc, "openmpi");
      const bool ok = ps >= 0.9 && us >= 0.9 && (po == 0 || (po >= 1.0 && uo >= 1.0)) &&
                      r.bytes.at(enc) < 2048;
      std::fprintf(out, "  %-7s %-24s /stride pack %.2f unpack %.2f  /openmpi pack %.2f unpack %.2f  "
                   "%llu bytes  %s\n", enc, r.name.c_str(), ps, us, po, uo,
                   static_cast<unsigned long long>(r.bytes.at(enc)), ok ? "met" : "NOT MET");
    }
  }
}

// A clustered bar chart per direction, one cluster per relation, one bar per alternative.
void Plot(const std::vector<Row>& rows, const std::string& png) {
  const std::string data = png + ".dat";
  FILE* f = std::fopen(data.c_str(), "w");
  if (!f) Die("cannot write " + data);
  const std::vector<std::string>& alts = rows.front().alts;
  for (const char* dir : {"pack", "unpack"}) {
    std::fprintf(f, "relation");
    for (const std::string& a : alts) std::fprintf(f, " %s", a.c_str());
    std::fprintf(f, "\n");
    for (const Row& r : rows) {
      std::fprintf(f, "\"%s\"", r.name.c_str());
      for (const std::string& a : alts)
        std::fprintf(f, " %.1f", (std::string(dir) == "pack" ? r.pack : r.unpack).at(a));
      std::fprintf(f, "\n");
    }
    std::fprintf(f, "\n\n");
  }
  std::fclose(f);
  FILE* g = popen("gnuplot", "w");
  if (!g) Die("cannot run gnuplot");
  std::fprintf(g,
               "set terminal pngcairo size 1400,560 noenhanced font ',10'\n"
               "set output '%s'\nset style data histogram\nset style histogram cluster gap 1\n"
               "set style fill solid border -1\nset boxwidth 0.9\nset ylabel 'MB/s (median)'\n"
               "set key outside right top\nset grid ytics\nset xtics rotate by -12 offset -4,0\n"
               "set multiplot layout 1,2\n",
               png.c_str());
  for (int idx = 0; idx < 2; ++idx) {
    std::fprintf(g, "set title '%s throughput, 1024x1024 doubles, node 0 -> node 0'\nplot ",
                 idx == 0 ? "pack (assembly)" : "unpack (disassembly)");
    for (std::size_t k = 0; k < alts.size(); ++k)
      std::fprintf(g, "%s'%s' index %d using %zu:xtic(1) title columnheader(%zu)", k ? ", " : "",
                   data.c_str(), idx, k + 2, k + 2);
    std::fprintf(g, "\n");
  }
  std::fprintf(g, "unset multiplot\n");
  if (pclose(g) != 0) Die("gnuplot failed");
  std::remove(data.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 21;
  bool json = false;
  std::string plot;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") {
      json = true;
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--plot" && i + 1 < argc) {
      plot = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--rounds N] [--json] [--plot FILE.png]\n", argv[0]);
      return 2;
    }
  }
  std::vector<Row> rows;
  for (const Case& c : PaperCases()) rows.push_back(Measure(c, rounds));
  augur::bench::MpiFinalize();
  // --json: the JSON on stdout, the human table on stderr (one run, both views).
  if (json) PrintJson(rows);
  PrintTable(json ? stderr : stdout, rows, rounds);
  if (!plot.empty()) Plot(rows, plot);
  return 0;
}
