// One-sided operations of the engine (Engine::expose, Engine::rma; docs/rma.md) between three
// ranks on the device: every rank writes, reads and updates the others' exposed memory and its
// own, with requests and without (Engine::rma_untracked, completed when rma_pending drains).
// Each case checks the data, the guard bytes after the target range, the path and the counters;
// the last checks that an access outside exposed memory fails its request (or, untracked, is
// reported by progress) and the peer, instead of hanging.
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "augur/host/engine.h"
#include "augur/nic/verbs.h"
#include "ranks.h"

namespace augur::host {
namespace {

using namespace std::chrono_literals;
using testing::run_ranks;

constexpr int kRanks = 3;
constexpr int kWaitMs = 120'000;
constexpr std::size_t kBytes = 256 * 1024;  // each rank's exposed data
constexpr std::size_t kSlice = kBytes / kRanks / 8 * 8;
constexpr int kAdds = 100;  // fetch-and-adds per rank: more than the 32 in flight per peer

std::byte byte_of(int from, std::size_t k) { return static_cast<std::byte>((static_cast<std::size_t>(from) * 97 + k * 7 + 3) & 0xff); }

struct Exposed {  // what a rank tells the others (through the bootstrap)
  std::uint64_t data = 0, counter = 0;
  std::uint32_t data_rkey = 0, counter_rkey = 0;
};

Result<std::vector<Exposed>> exchange(Bootstrap& boot, const Exposed& mine) {
  AUGUR_RETURN_IF_ERROR(boot.put("rma.test", std::string(reinterpret_cast<const char*>(&mine), sizeof mine)));
  AUGUR_RETURN_IF_ERROR(boot.fence());
  std::vector<Exposed> all(kRanks);
  for (int p = 0; p < kRanks; ++p) {
    AUGUR_ASSIGN_OR_RETURN(std::string s, boot.get(p, "rma.test"));
    CHECK(s.size() == sizeof(Exposed), "exchange");
    std::memcpy(&all[static_cast<std::size_t>(p)], s.data(), sizeof(Exposed));
  }
  return all;
}

Status rank_main(std::uint16_t port, int rank) {
  AUGUR_ASSIGN_OR_RETURN(auto boot, TcpBootstrap::connect(testing::bootstrap_host(), port, rank, kRanks, 120s));
  EngineConfig cfg{.slots = 16, .eager_limit = 4096, .steering = Steering::kOff};
  AUGUR_ASSIGN_OR_RETURN(auto e, Engine::create(*boot, cfg));
  // Data plus guard bytes that nobody may write; the counter word is separate.
  std::vector<std::byte> data(kBytes + 64, std::byte{0xcc});
  alignas(8) std::uint64_t counter = 1000;
  AUGUR_ASSIGN_OR_RETURN(auto dmr, e->expose(data.data(), kBytes));
  AUGUR_ASSIGN_OR_RETURN(auto cmr, e->expose(&counter, sizeof counter));
  AUGUR_ASSIGN_OR_RETURN(std::vector<Exposed> peers,
                         exchange(*boot, {reinterpret_cast<std::uintptr_t>(data.data()), reinterpret_cast<std::uintptr_t>(&counter),
                                          dmr->rkey(), cmr->rkey()}));

  // 1. Each rank writes its slice into every rank's data (itself included), then reads every
  //    slice back from its right neighbour.
  std::vector<std::byte> mine(kSlice);
  for (std::size_t k = 0; k < kSlice; ++k) mine[k] = byte_of(rank, k);
  std::vector<RequestPtr> reqs;
  for (int p = 0; p < kRanks; ++p) {
    const Exposed& x = peers[static_cast<std::size_t>(p)];
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e->rma(p, RmaOp::kPut, mine.data(), kSlice,
                                                {x.data + static_cast<std::uint64_t>(rank) * kSlice, x.data_rkey}));
    reqs.push_back(r);
  }
  for (const RequestPtr& r : reqs) {
    AUGUR_RETURN_IF_ERROR(e->wait(r, kWaitMs));
    CHECK(r->path == Path::kOneSided, "a put's path");
  }
  AUGUR_RETURN_IF_ERROR(boot->fence());  // every rank's puts are complete (acknowledged) now
  for (int p = 0; p < kRanks; ++p) {
    for (std::size_t k = 0; k < kSlice; ++k) {
      CHECK(data[static_cast<std::size_t>(p) * kSlice + k] == byte_of(p, k), "rank " + std::to_string(p) + "'s put, byte " + std::to_string(k));
    }
  }
  for (std::size_t k = kBytes; k < data.size(); ++k) CHECK(data[k] == std::byte{0xcc}, "a guard byte was written");
  const int right = (rank + 1) % kRanks;
  std::vector<std::byte> back(kRanks * kSlice + 8, std::byte{0x11});
  AUGUR_ASSIGN_OR_RETURN(RequestPtr g, e->rma(right, RmaOp::kGet, back.data(), kRanks * kSlice,
                                              {peers[static_cast<std::size_t>(right)].data, peers[static_cast<std::size_t>(right)].data_rkey}));
  AUGUR_RETURN_IF_ERROR(e->wait(g, kWaitMs));
  for (int p = 0; p < kRanks; ++p) {
    for (std::size_t k = 0; k < kSlice; k += 97) {
      CHECK(back[static_cast<std::size_t>(p) * kSlice + k] == byte_of(p, k), "get from the right neighbour");
    }
  }
  CHECK(back[kRanks * kSlice] == std::byte{0x11}, "a get wrote past its length");

  // 2. Atomics: every rank adds 1 to every rank's counter kAdds times, all posted before any
  //    wait (the engine queues past 32 in flight); the old values each rank saw at one target
  //    increase, and the final count is exact. Then one compare-and-swap per rank on rank 0's
  //    counter from its known final value: exactly one wins.
  std::vector<std::uint64_t> olds(static_cast<std::size_t>(kRanks * kAdds));
  reqs.clear();
  for (int i = 0; i < kAdds; ++i) {
    for (int p = 0; p < kRanks; ++p) {
      const Exposed& x = peers[static_cast<std::size_t>(p)];
      AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e->rma(p, RmaOp::kFetchAdd, &olds[static_cast<std::size_t>(p * kAdds + i)], 8,
                                                  {x.counter, x.counter_rkey}, 1));
      reqs.push_back(r);
    }
  }
  for (int p = 0; p < kRanks; ++p) CHECK(e->rma_pending(p) <= kAdds, "pending count");
  for (const RequestPtr& r : reqs) AUGUR_RETURN_IF_ERROR(e->wait(r, kWaitMs));
  for (int p = 0; p < kRanks; ++p) {
    CHECK(e->rma_pending(p) == 0, "operations still pending after their waits");
    for (int i = 1; i < kAdds; ++i) {
      CHECK(olds[static_cast<std::size_t>(p * kAdds + i)] > olds[static_cast<std::size_t>(p * kAdds + i - 1)],
            "one origin's fetch-and-adds to one target out of order");
    }
  }
  AUGUR_RETURN_IF_ERROR(boot->fence());
  CHECK(std::atomic_ref<std::uint64_t>(counter).load() == 1000u + kRanks * kAdds, "counter after every rank's adds");
  AUGUR_RETURN_IF_ERROR(boot->fence());  // every rank has read its counter before rank 0's is swapped
  std::uint64_t seen = 0;
  const std::uint64_t final_count = 1000u + kRanks * kAdds;
  AUGUR_ASSIGN_OR_RETURN(RequestPtr cas, e->rma(0, RmaOp::kCompareSwap, &seen, 8, {peers[0].counter, peers[0].counter_rkey},
                                                final_count, 7000u + static_cast<std::uint64_t>(rank)));
  AUGUR_RETURN_IF_ERROR(e->wait(cas, kWaitMs));
  const bool won = seen == final_count;
  CHECK(won || seen >= 7000, "compare-and-swap saw " + std::to_string(seen));
  AUGUR_RETURN_IF_ERROR(boot->put("rma.won", won ? "1" : "0"));
  AUGUR_RETURN_IF_ERROR(boot->fence());
  int winners = 0;
  for (int p = 0; p < kRanks; ++p) {
    AUGUR_ASSIGN_OR_RETURN(std::string w, boot->get(p, "rma.won"));
    winners += w == "1";
  }
  CHECK(winners == 1, std::to_string(winners) + " compare-and-swap winners");
  const EngineCounters c = e->counters();
  CHECK(c.rma_puts == kRanks && c.rma_gets == 1 && c.rma_atomics == kRanks * kAdds + 1 &&
            c.rma_bytes == kRanks * kSlice + kRanks * kSlice,
        "counters: " + e->stats_line());

  // 2b. Puts and gets without requests (Engine::rma_untracked, as MPI_Put and MPI_Get): more
  //     than fit in flight to one peer, complete once rma_pending has drained under progress().
  //     Each rank writes a new slice into its right neighbour in pieces, then reads it back.
  constexpr std::size_t kPieces = 3 * Channel::kMaxRma / 2;
  constexpr std::size_t kPiece = kSlice / kPieces;
  const Exposed& rx = peers[static_cast<std::size_t>(right)];
  const std::uint64_t at = rx.data + static_cast<std::uint64_t>(rank) * kSlice;
  for (std::size_t k = 0; k < kSlice; ++k) mine[k] = byte_of(rank + 10, k);
  auto drain = [&](int peer) -> Status {
    for (int spins = 0; e->rma_pending(peer) > 0; ++spins) {
      AUGUR_RETURN_IF_ERROR(e->progress());
      CHECK(spins < 100'000'000, "untracked operations never drained");
    }
    return Status::Ok();
  };
  for (std::size_t i = 0; i < kPieces; ++i) {
    AUGUR_RETURN_IF_ERROR(e->rma_untracked(right, RmaOp::kPut, mine.data() + i * kPiece, kPiece, {at + i * kPiece, rx.data_rkey}));
  }
  CHECK(e->rma_pending(right) > 0, "untracked puts complete before any progress");
  AUGUR_RETURN_IF_ERROR(drain(right));
  std::vector<std::byte> again(kPieces * kPiece + 8, std::byte{0x22});
  for (std::size_t i = 0; i < kPieces; ++i) {
    AUGUR_RETURN_IF_ERROR(e->rma_untracked(right, RmaOp::kGet, again.data() + i * kPiece, kPiece, {at + i * kPiece, rx.data_rkey}));
  }
  AUGUR_RETURN_IF_ERROR(drain(right));
  CHECK(std::memcmp(again.data(), mine.data(), kPieces * kPiece) == 0, "untracked puts read back by untracked gets");
  CHECK(again[kPieces * kPiece] == std::byte{0x22}, "an untracked get wrote past its length");
  const EngineCounters c2 = e->counters();
  CHECK(c2.rma_puts == c.rma_puts + kPieces && c2.rma_gets == c.rma_gets + kPieces &&
            c2.rma_bytes == c.rma_bytes + 2 * kPieces * kPiece,
        "counters after the untracked operations: " + e->stats_line());
  CHECK(!e->rma_untracked(right, RmaOp::kFetchAdd, mine.data(), 8, {rx.counter, rx.counter_rkey}).ok(),
        "an untracked atomic (its old value has nowhere to go)");
  AUGUR_RETURN_IF_ERROR(boot->fence());

  // 3. Misuse: a bad argument is refused before anything is posted; then rank 1 reads past
  //    rank 0's exposed data: its request fails and rank 0 is reported failed, no hang.
  std::uint64_t word = 0;
  CHECK(!e->rma(0, RmaOp::kFetchAdd, &word, 4, {peers[0].counter, peers[0].counter_rkey}).ok(), "a 4-byte atomic");
  CHECK(!e->rma(0, RmaOp::kFetchAdd, &word, 8, {peers[0].counter + 1, peers[0].counter_rkey}).ok(), "a misaligned atomic");
  CHECK(!e->rma(kRanks, RmaOp::kGet, &word, 8, {peers[0].data, peers[0].data_rkey}).ok(), "a rank out of range");
  AUGUR_RETURN_IF_ERROR(boot->fence());
  if (rank == 1) {
    std::vector<std::byte> over(kBytes + 4096);
    AUGUR_ASSIGN_OR_RETURN(RequestPtr bad, e->rma(0, RmaOp::kGet, over.data(), over.size(), {peers[0].data, peers[0].data_rkey}));
    const Status st = e->wait(bad, kWaitMs);
    CHECK(!st.ok() && bad->done && !bad->status.ok(), "a READ past the exposed memory did not fail: " + st.to_string());
    CHECK(!e->rma(0, RmaOp::kGet, &word, 8, {peers[0].data, peers[0].data_rkey}).ok(), "rank 0 still usable after the failure");
  }
  if (rank == 2) {  // the same without a request: progress() reports it, and the count drains
    std::vector<std::byte> over(kBytes + 4096);
    AUGUR_RETURN_IF_ERROR(e->rma_untracked(0, RmaOp::kGet, over.data(), over.size(), {peers[0].data, peers[0].data_rkey}));
    Status st;
    for (int spins = 0; st.ok() && spins < 100'000'000; ++spins) st = e->progress();
    CHECK(!st.ok(), "an untracked READ past the exposed memory was not reported");
    CHECK(e->rma_pending(0) == 0, "the failed untracked READ is still counted");
    CHECK(!e->rma_untracked(0, RmaOp::kGet, &word, 8, {peers[0].data, peers[0].data_rkey}).ok(),
          "rank 0 still usable after the failure");
  }
  return boot->fence();
}

TEST(Rma, PutsGetsAndAtomicsBetweenThreeRanksAndOneself) {
  run_ranks(kRanks, [](std::uint16_t port, int rank) { return rank_main(port, rank); });
}

}  // namespace
}  // namespace augur::host
