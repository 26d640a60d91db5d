// augur-perf-patterns: the MPI-level patterns of `scripts/augur-perf` that are not a plain
// ping-pong or stream, written against the MPI interface only, so that one source measures
// every MPI it is built against (augur, Open MPI, MPICH). Rank 0 prints one JSON object.
//
//   halo           each rank of a periodic ring posts MPI_Irecv from both neighbours, then
//                  MPI_Isend to both, then MPI_Waitall: receives posted just before the peers
//                  send (a stencil code). Time per iteration.
//   early-arrival  rank 0 sends to rank 1 as soon as rank 1 says go; rank 1 then waits a
//                  controlled delay (long enough for the message to have arrived) before it
//                  posts the receive (--post late) or before it waits on a receive it posted
//                  before the go (--post pre), as Sandia's msgrate separates its tests. Time from
//                  that call to completion. --pattern cyclic: the receives cycle over 4 buffers
//                  (each on whole pages of its own) and tags in a fixed order (what a predictor
//                  learns); random: buffer and tag drawn by a generator both ranks share
//                  (nothing to learn).
//   buffering      the token ring of Gropp's buffering paper (../shared/papers/buffering.txt):
//                  a message passed around all ranks, receives posted before the token comes
//                  (never buffered), and the same ring with MPI_Probe before each receive (every
//                  message arrives before its receive is posted: buffered if the MPI buffers).
//                  Per size: both bandwidths, the memcpy speed, the paper's effective buffered
//                  bandwidth b_c*b_n/(b_c+b_n); over all sizes: the harmonic mean of each.
//   overlap        a nonblocking collective (--coll iallreduce|ialltoall|ibcast|ibarrier; bytes
//                  per rank) against computation, as the usual nonblocking-collective benchmarks
//                  measure it: the collective alone (start, wait), computation alone (a spin as
//                  long as the collective), and both (start, compute, wait), the computation
//                  either silent or calling MPI_Test ten times (what gives an MPI without a
//                  progress thread its chance). Overlap = 1 - (t_both - t_compute) / t_collective.
//   rma            one-sided: rank 0 the origin, rank 1 the target, inside one MPI_Win_lock_all
//                  epoch on an MPI_Win_allocate window. Per operation, completed by
//                  MPI_Win_flush: MPI_Put, MPI_Get, MPI_Accumulate (MPI_SUM of doubles) of n bytes,
//                  MPI_Fetch_and_op (one int64); and MPI_Put while the target computes without
//                  calling MPI (what an MPI whose target must take part cannot overlap).
//
// Usage: augur-perf-patterns halo|early-arrival|buffering|overlap|rma [--sizes a,b,c] [--iters N]
//        [--rounds R] [--pattern cyclic|random] [--post late|pre] [--delay-us D] [--coll C]
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "mpi_bench.h"

namespace {

using Clock = std::chrono::steady_clock;
using augur::perf::median;

struct Options {
  std::string cmd;
  std::vector<std::size_t> sizes;
  int iters = 0;  // 0: the subcommand's default
  int rounds = 3;
  bool random = false;
  bool late = true;
  int delay_us = 300;
  std::string coll = "iallreduce";
};

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

void spin_us(double us) {
  const auto t0 = Clock::now();
  while (us_since(t0) < us) {
  }
}

// A tiny generator both ranks of early-arrival run in step (same seed, same draws).
struct Lcg {
  std::uint64_t s = 0x9e3779b97f4a7c15ULL;
  unsigned next(unsigned n) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<unsigned>((s >> 33) % n);
  }
};

bool ok(int rc) { return rc == MPI_SUCCESS; }

// Median time per halo iteration (us) over `rounds` rounds of `iters` after `iters` untimed.
bool halo(const Options& o, int rank, int size, std::size_t n, double& t_typ, double& t_min) {
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  const int count = static_cast<int>(n);
  std::vector<char> sl(n, 1), sr(n, 2), rl(n), rr(n);
  std::vector<double> per_round;
  for (int round = -1; round < o.rounds; ++round) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = Clock::now();
    for (int i = 0; i < o.iters; ++i) {
      MPI_Request req[4];
      // Tag 0 travels rightwards, tag 1 leftwards: with 2 ranks both neighbours are one rank.
      if (!ok(MPI_Irecv(rl.data(), count, MPI_CHAR, left, 0, MPI_COMM_WORLD, &req[0])) ||
          !ok(MPI_Irecv(rr.data(), count, MPI_CHAR, right, 1, MPI_COMM_WORLD, &req[1])) ||
          !ok(MPI_Isend(sr.data(), count, MPI_CHAR, right, 0, MPI_COMM_WORLD, &req[2])) ||
          !ok(MPI_Isend(sl.data(), count, MPI_CHAR, left, 1, MPI_COMM_WORLD, &req[3])) ||
          !ok(MPI_Waitall(4, req, MPI_STATUSES_IGNORE))) {
        return false;
      }
      if (rl[n - 1] != 2 || rr[0] != 1) {  // rightwards goes sr (2s), leftwards sl (1s)
        std::fprintf(stderr, "augur-perf-patterns: halo data arrived wrong\n");
        return false;
      }
    }
    if (round >= 0) per_round.push_back(us_since(t0) / o.iters);
  }
  double mine[2] = {median(per_round), *std::min_element(per_round.begin(), per_round.end())}, all[2];
  MPI_Reduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);  // the slowest rank sets the pace
  t_typ = all[0];
  t_min = all[1];
  return true;
}

// Rank 1's median time from the receive call after the delay to completion (us), and of that the
// median time inside the call itself (MPI_Irecv when late, 0 when pre-posted: it tells the work
// done at the post from the wait for the data); `received` adds up the bytes rank 1 received
// (the go messages are empty).
bool early_arrival(const Options& o, int rank, std::size_t n, double& t_typ, double& t_min, double& t_call,
                   std::uint64_t& received) {
  constexpr int kBuffers = 4;
  const int count = static_cast<int>(n);
  // Each buffer on whole pages of its own, as a program's arrays of a few KiB and up usually are
  // (and as AUGUR_STEERING=speculative needs: it guards whole pages).
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t span = (std::max<std::size_t>(n, 1) + page - 1) / page * page;
  struct Free {
    void operator()(char* p) const noexcept { std::free(p); }
  };
  std::vector<std::unique_ptr<char, Free>> owned;
  std::vector<char*> buf;
  for (int k = 0; k < kBuffers; ++k) {
    owned.emplace_back(static_cast<char*>(std::aligned_alloc(page, span)));
    if (!owned.back()) return false;
    std::memset(owned.back().get(), 0, span);
    buf.push_back(owned.back().get());
  }
  std::vector<char> tx(n);
  std::vector<double> us, call_us;
  Lcg gen;
  // The delay covers the go and the data at 10 MB/s or more: the message is in before the call.
  const double delay = o.delay_us + static_cast<double>(n) / 10.0;
  const int warm = std::max(o.iters / 4, 8);
  for (int i = -warm; i < o.iters * o.rounds; ++i) {
    const unsigned b = o.random ? gen.next(kBuffers) : static_cast<unsigned>((i + warm) % kBuffers);
    const int tag = 10 + static_cast<int>(b);
    if (rank == 0) {
      std::memset(tx.data(), static_cast<int>(b + 1 + (i & 0x3f)), n);
      if (!ok(MPI_Recv(nullptr, 0, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)) ||
          !ok(MPI_Send(tx.data(), count, MPI_CHAR, 1, tag, MPI_COMM_WORLD))) {
        return false;
      }
    } else if (rank == 1) {
      MPI_Request r = MPI_REQUEST_NULL;
      if (!o.late && !ok(MPI_Irecv(buf[b], count, MPI_CHAR, 0, tag, MPI_COMM_WORLD, &r))) return false;
      if (!ok(MPI_Send(nullptr, 0, MPI_CHAR, 0, 1, MPI_COMM_WORLD))) return false;
      spin_us(delay);
      const auto t0 = Clock::now();
      if (o.late && !ok(MPI_Irecv(buf[b], count, MPI_CHAR, 0, tag, MPI_COMM_WORLD, &r))) return false;
      const double t_posted = o.late ? us_since(t0) : 0.0;
      if (!ok(MPI_Wait(&r, MPI_STATUS_IGNORE))) return false;
      const double t = us_since(t0);
      const char want = static_cast<char>(b + 1 + (i & 0x3f));
      if (buf[b][0] != want || buf[b][n - 1] != want) {
        std::fprintf(stderr, "augur-perf-patterns: early-arrival data arrived wrong\n");
        return false;
      }
      if (i >= 0) {
        us.push_back(t);
        call_us.push_back(t_posted);
      }
      received += n;
    }
  }
  double mine[3] = {us.empty() ? 0 : median(us), us.empty() ? 0 : *std::min_element(us.begin(), us.end()),
                    call_us.empty() ? 0 : median(call_us)};
  if (rank == 1) MPI_Send(mine, 3, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
  if (rank == 0) MPI_Recv(mine, 3, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Bcast(&received, 1, MPI_UINT64_T, 1, MPI_COMM_WORLD);
  t_typ = mine[0];
  t_min = mine[1];
  t_call = mine[2];
  return true;
}

// Median time of one hop of the token ring (us): `probe` makes every receive wait for its
// message (MPI_Probe, then MPI_Recv), otherwise the receive is posted before the token leaves
// rank 0 (each rank posts the next lap's receive right after forwarding).
bool ring(const Options& o, int rank, int size, std::size_t n, bool probe, double& hop_us) {
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  const int count = static_cast<int>(n);
  std::vector<char> token(n, 3), in(n);
  std::vector<double> laps;
  for (int round = -1; round < o.rounds; ++round) {
    MPI_Request r = MPI_REQUEST_NULL;
    if (!probe && !ok(MPI_Irecv(in.data(), count, MPI_CHAR, left, 5, MPI_COMM_WORLD, &r))) return false;
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = Clock::now();
    for (int lap = 0; lap < o.iters; ++lap) {
      if (rank == 0 && !ok(MPI_Send(token.data(), count, MPI_CHAR, right, 5, MPI_COMM_WORLD))) return false;
      if (probe) {
        if (!ok(MPI_Probe(left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE)) ||
            !ok(MPI_Recv(in.data(), count, MPI_CHAR, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE))) {
          return false;
        }
      } else if (!ok(MPI_Wait(&r, MPI_STATUS_IGNORE))) {
        return false;
      }
      const bool more = lap + 1 < o.iters;
      if (!probe && more && !ok(MPI_Irecv(in.data(), count, MPI_CHAR, left, 5, MPI_COMM_WORLD, &r))) return false;
      if (rank != 0 && !ok(MPI_Send(in.data(), count, MPI_CHAR, right, 5, MPI_COMM_WORLD))) return false;
    }
    if (in[0] != 3 || in[n - 1] != 3) {
      std::fprintf(stderr, "augur-perf-patterns: the token arrived wrong\n");
      return false;
    }
    if (round >= 0) laps.push_back(us_since(t0) / (static_cast<double>(o.iters) * size));
  }
  hop_us = median(laps);
  MPI_Bcast(&hop_us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return true;
}

// memcpy speed for `n` bytes (MB/s), cold enough to be a copy out of a bounce buffer: the
// source and destination rotate through 64 MiB.
double copy_mbps(std::size_t n) {
  const std::size_t span = std::max<std::size_t>(n, std::size_t{64} << 20);
  std::vector<char> src(span, 7), dst(span);
  const int reps = static_cast<int>(std::max<std::size_t>(span / n, 16));
  std::vector<double> us;
  for (int round = 0; round < 3; ++round) {
    const auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) {
      const std::size_t off = (static_cast<std::size_t>(i) * n) % (span - n + 1);
      std::memcpy(dst.data() + off, src.data() + off, n);
    }
    us.push_back(us_since(t0) / reps);
  }
  volatile char sink = dst[n - 1];
  (void)sink;
  return static_cast<double>(n) / median(us);
}

// Starts the nonblocking collective of `overlap` on n bytes per rank.
bool start_coll(const std::string& coll, std::vector<double>& a, std::vector<double>& b, std::size_t n, int size,
                MPI_Request* r) {
  const int count = static_cast<int>(std::max<std::size_t>(n / sizeof(double), 1));
  if (coll == "iallreduce") return ok(MPI_Iallreduce(a.data(), b.data(), count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, r));
  if (coll == "ibcast") return ok(MPI_Ibcast(a.data(), count, MPI_DOUBLE, 0, MPI_COMM_WORLD, r));
  if (coll == "ibarrier") return ok(MPI_Ibarrier(MPI_COMM_WORLD, r));
  const int per = std::max(count / size, 1);  // ialltoall: n bytes per rank in all
  return ok(MPI_Ialltoall(a.data(), per, MPI_DOUBLE, b.data(), per, MPI_DOUBLE, MPI_COMM_WORLD, r));
}

// Spins `us`, calling MPI_Test on `r` `tests` times at even intervals (0: silent).
bool compute(double us, int tests, MPI_Request* r) {
  const auto t0 = Clock::now();
  for (int k = 1; k <= tests; ++k) {
    while (us_since(t0) < us * k / (tests + 1)) {
    }
    int flag = 0;
    if (*r != MPI_REQUEST_NULL && !ok(MPI_Test(r, &flag, MPI_STATUS_IGNORE))) return false;
  }
  spin_us(us - us_since(t0));
  return true;
}

// The overlap row for n bytes: t[0] collective alone, t[1] compute alone, t[2] both with silent
// compute, t[3] both with MPI_Test calls (us; medians over rounds, the slowest rank's).
bool overlap(const Options& o, int size, std::size_t n, double t[4]) {
  const std::size_t elems = std::max<std::size_t>(n / sizeof(double), 1) * static_cast<std::size_t>(size);
  std::vector<double> a(elems, 1.0), b(elems, 0.0);
  std::vector<double> rounds[4];
  double t_coll = 0;
  for (int round = -1; round < o.rounds; ++round) {
    for (int phase = 0; phase < 4; ++phase) {
      MPI_Barrier(MPI_COMM_WORLD);
      const auto t0 = Clock::now();
      for (int i = 0; i < o.iters; ++i) {
        MPI_Request r = MPI_REQUEST_NULL;
        if (phase != 1 && !start_coll(o.coll, a, b, n, size, &r)) return false;
        if (phase >= 1 && !compute(t_coll, phase == 3 ? 10 : 0, &r)) return false;
        if (!ok(MPI_Wait(&r, MPI_STATUS_IGNORE))) return false;
      }
      const double per = us_since(t0) / o.iters;
      if (phase == 0) t_coll = per;  // what the compute phases spin, this round
      if (round >= 0) rounds[phase].push_back(per);
    }
  }
  if (o.coll == "iallreduce" && b[0] != static_cast<double>(size)) {
    std::fprintf(stderr, "augur-perf-patterns: iallreduce gave %g, not %d\n", b[0], size);
    return false;
  }
  double mine[4];
  for (int k = 0; k < 4; ++k) mine[k] = median(rounds[k]);
  MPI_Reduce(mine, t, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return true;
}

// The rma row for n bytes: t[0] put, t[1] get, t[2] accumulate, t[3] fetch_and_op, t[4] put with
// the target computing (us per operation, completion included; medians over rounds, at rank 0).
bool rma(const Options& o, int rank, std::size_t n, double t[5]) {
  const std::size_t elems = std::max<std::size_t>(n / sizeof(double), 1);
  const auto bytes = static_cast<MPI_Aint>(elems * sizeof(double));
  double* base = nullptr;
  MPI_Win win;
  if (!ok(MPI_Win_allocate(bytes, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win))) return false;
  std::fill(base, base + elems, 0.0);
  std::vector<double> local(elems, 1.0);
  std::int64_t one = 1, old = 0;
  const int count = static_cast<int>(elems);
  std::vector<double> rounds[5];
  MPI_Win_lock_all(0, win);
  auto op = [&](int k) {
    switch (k) {
      case 1: return ok(MPI_Get(local.data(), count, MPI_DOUBLE, 1, 0, count, MPI_DOUBLE, win));
      case 2: return ok(MPI_Accumulate(local.data(), count, MPI_DOUBLE, 1, 0, count, MPI_DOUBLE, MPI_SUM, win));
      case 3: return ok(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 1, 0, MPI_SUM, win));
      default: return ok(MPI_Put(local.data(), count, MPI_DOUBLE, 1, 0, count, MPI_DOUBLE, win));
    }
  };
  for (int round = -1; round < o.rounds; ++round) {
    for (int k = 0; k < 5; ++k) {
      double busy_us = 0;
      if (k == 4) {  // the target computes for three times as long as the plain puts took
        busy_us = round >= 0 && rank == 0 ? 3 * o.iters * rounds[0].back() + 1000 : 1000;  // sent by rank 0
        MPI_Bcast(&busy_us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      }
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 1 && k == 4) spin_us(busy_us);
      if (rank != 0) continue;
      const auto t0 = Clock::now();
      for (int i = 0; i < o.iters; ++i) {
        if (!op(k) || !ok(MPI_Win_flush(1, win))) return false;
      }
      if (round >= 0) rounds[k].push_back(us_since(t0) / o.iters);
      if (k == 2) {  // the puts left 1.0 everywhere; each accumulate added 1.0
        double last = 0;
        if (!ok(MPI_Get(&last, 1, MPI_DOUBLE, 1, count - 1, 1, MPI_DOUBLE, win)) || !ok(MPI_Win_flush(1, win))) return false;
        if (last != 1.0 + o.iters) {
          std::fprintf(stderr, "augur-perf-patterns: rma accumulated %g, not %g\n", last, 1.0 + o.iters);
          return false;
        }
      }
    }
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  for (int k = 0; k < 5; ++k) t[k] = rank == 0 ? median(rounds[k]) : 0;
  return true;
}

double overlap_pct(double t_coll, double t_comp, double t_both) {
  const double v = 100.0 * (1.0 - (t_both - t_comp) / t_coll);
  return std::max(0.0, std::min(100.0, v));
}

double harmonic_mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += 1 / x;
  return static_cast<double>(v.size()) / s;
}

int run(const Options& o, int rank, int size) {
  int name_len = 0;
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  MPI_Get_library_version(version, &name_len);
  std::string lib(version);  // its first line, at most 60 characters, fit for a JSON string
  lib = lib.substr(0, std::min<std::size_t>(lib.find('\n'), 60));
  for (char& c : lib) {
    if (c == '"' || c == '\\' || c == '\n' || c == '\t') c = ' ';
  }
  std::string json = "{\"pattern\": \"" + o.cmd + "\", \"ranks\": " + std::to_string(size) + ", \"library\": \"" + lib + "\"";
  char row[512];
  if (o.cmd == "early-arrival") {
    std::snprintf(row, sizeof row, ", \"order\": \"%s\", \"post\": \"%s\", \"delay_us\": %d", o.random ? "random" : "cyclic",
                  o.late ? "late" : "pre", o.delay_us);
    json += row;
  }
  if (o.cmd == "overlap") json += ", \"collective\": \"" + o.coll + "\"";
  json += ", \"rows\": [";
  std::vector<double> pre_bw, probe_bw, eff_bw;
  std::uint64_t received = 0;
  for (std::size_t k = 0; k < o.sizes.size(); ++k) {
    const std::size_t n = o.sizes[k];
    double a = 0, b = 0;
    if (o.cmd == "halo") {
      if (!halo(o, rank, size, n, a, b)) return 1;
      std::snprintf(row, sizeof row, "{\"bytes\": %zu, \"t_typical\": %.3f, \"t_min\": %.3f}", n, a, b);
    } else if (o.cmd == "early-arrival") {
      double c = 0;
      if (!early_arrival(o, rank, n, a, b, c, received)) return 1;
      std::snprintf(row, sizeof row, "{\"bytes\": %zu, \"post_to_completion_us\": %.3f, \"t_min\": %.3f, \"post_call_us\": %.3f}",
                    n, a, b, c);
    } else if (o.cmd == "overlap") {
      double t[4];
      if (!overlap(o, size, n, t)) return 1;
      std::snprintf(row, sizeof row,
                    "{\"bytes\": %zu, \"t_collective\": %.3f, \"t_compute\": %.3f, \"t_both_silent\": %.3f, "
                    "\"overlap_silent_pct\": %.1f, \"t_both_tests\": %.3f, \"overlap_tests_pct\": %.1f}",
                    n, t[0], t[1], t[2], overlap_pct(t[0], t[1], t[2]), t[3], overlap_pct(t[0], t[1], t[3]));
    } else if (o.cmd == "rma") {
      double t[5];
      if (!rma(o, rank, n, t)) return 1;
      std::snprintf(row, sizeof row,
                    "{\"bytes\": %zu, \"t_put\": %.3f, \"t_get\": %.3f, \"t_accumulate\": %.3f, \"t_fetch_and_op\": %.3f, "
                    "\"t_put_target_busy\": %.3f}",
                    n, t[0], t[1], t[2], t[3], t[4]);
    } else {
      if (!ring(o, rank, size, n, false, a) || !ring(o, rank, size, n, true, b)) return 1;
      const double bn = static_cast<double>(n) / a, bu = static_cast<double>(n) / b, bc = copy_mbps(n);
      const double be = bc * bn / (bc + bn);
      pre_bw.push_back(bn);
      probe_bw.push_back(bu);
      eff_bw.push_back(be);
      std::snprintf(row, sizeof row,
                    "{\"bytes\": %zu, \"hop_us_preposted\": %.3f, \"hop_us_unexpected\": %.3f, \"mbps_preposted\": %.3f, "
                    "\"mbps_unexpected\": %.3f, \"copy_mbps\": %.1f, \"mbps_effective_buffered\": %.3f}",
                    n, a, b, bn, bu, bc, be);
    }
    if (rank == 0) std::fprintf(stderr, "  %s %zu bytes done\n", o.cmd.c_str(), n);
    if (k > 0) json += ", ";
    json += row;
  }
  json += "]";
  if (o.cmd == "early-arrival") json += ", \"bytes_received\": " + std::to_string(received);
  if (o.cmd == "buffering") {
    std::snprintf(row, sizeof row,
                  ", \"harmonic_mean_mbps\": {\"preposted\": %.3f, \"unexpected\": %.3f, \"effective_buffered\": %.3f}",
                  harmonic_mean(pre_bw), harmonic_mean(probe_bw), harmonic_mean(eff_bw));
    json += row;
  }
  json += "}";
  if (rank == 0) std::printf("%s\n", json.c_str());
  return 0;
}

constexpr const char* kUsage =
    "usage: augur-perf-patterns halo|early-arrival|buffering|overlap|rma [--sizes a,b,c] [--iters N] [--rounds R]\n"
    "       [--pattern cyclic|random] [--post late|pre] [--delay-us D]\n"
    "       [--coll iallreduce|ialltoall|ibcast|ibarrier]\n"
    "(early-arrival and rma: exactly 2 ranks; halo, buffering and overlap: 2 or more)\n";

}  // namespace

int main(int argc, char** argv) {
  int rank = 0, size = 0;
  augur::perf::mpi_start(argc, argv, rank, size);
  Options o;
  bool good = argc >= 2 && size >= 2;
  if (good) o.cmd = argv[1];
  for (int i = 2; i < argc && good; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    good = v != nullptr;
    if (!good) break;
    ++i;
    if (a == "--sizes") {
      o.sizes = augur::perf::parse_sizes(v, good);
    } else if (a == "--iters") {
      o.iters = std::atoi(v);
    } else if (a == "--rounds") {
      o.rounds = std::atoi(v);
    } else if (a == "--pattern") {
      o.random = std::strcmp(v, "random") == 0;
      good = o.random || std::strcmp(v, "cyclic") == 0;
    } else if (a == "--post") {
      o.late = std::strcmp(v, "late") == 0;
      good = o.late || std::strcmp(v, "pre") == 0;
    } else if (a == "--delay-us") {
      o.delay_us = std::atoi(v);
    } else if (a == "--coll") {
      o.coll = v;
      good = o.coll == "iallreduce" || o.coll == "ialltoall" || o.coll == "ibcast" || o.coll == "ibarrier";
    } else {
      good = false;
    }
  }
  if (o.cmd == "halo") {
    if (o.sizes.empty()) o.sizes = {4096, 32768, 262144};
    if (o.iters == 0) o.iters = 200;
  } else if (o.cmd == "early-arrival") {
    if (o.sizes.empty()) o.sizes = {64, 4096, 65536};
    if (o.iters == 0) o.iters = 100;
    good = good && size == 2;
  } else if (o.cmd == "buffering") {
    if (o.sizes.empty()) o.sizes = {1024, 8192, 65536, 524288};
    if (o.iters == 0) o.iters = 50;
  } else if (o.cmd == "overlap") {
    if (o.sizes.empty()) o.sizes = {8, 16384, 1048576};
    if (o.iters == 0) o.iters = 50;
  } else if (o.cmd == "rma") {
    if (o.sizes.empty()) o.sizes = {8, 4096, 65536};
    if (o.iters == 0) o.iters = 100;
    good = good && size == 2;
  } else {
    good = false;
  }
  good = good && o.iters >= 1 && o.rounds >= 1 && o.delay_us >= 0;
  if (!good) return augur::perf::mpi_usage(rank, kUsage);
  const int rc = run(o, rank, size);
  if (rc != 0) MPI_Abort(MPI_COMM_WORLD, rc);
  MPI_Finalize();
  return rc;
}
