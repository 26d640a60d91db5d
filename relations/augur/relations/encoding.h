// Encodings of an address relation (Dinda & O'Hallaron, "Fast Message Assembly Using Compact
// Address Relations"): AAPAIR, AABLK, DMRLE, DMRLEC, plus NESTED (a DMRLE-like block repeated
// with an outer stride). Executors (executor.h) decode them on the fly; nothing is expanded.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "augur/relations/relation.h"
#include "augur/status.h"

namespace augur::relations {

enum class Encoding : std::uint8_t { kAapair, kAablk, kDmrle, kDmrlec, kNested };
inline constexpr Encoding kAllEncodings[] = {Encoding::kAapair, Encoding::kAablk, Encoding::kDmrle,
                                             Encoding::kDmrlec, Encoding::kNested};

// "AAPAIR", "AABLK", "DMRLE", "DMRLEC", "NESTED".
std::string_view EncodingName(Encoding e) noexcept;

// AABLK symbol: source s..s+len-1 maps to destination d..d+len-1.
struct Block {
  std::uint64_t s = 0;
  std::uint64_t d = 0;
  std::uint64_t len = 0;
  friend bool operator==(const Block&, const Block&) = default;
};

// DMRLE symbol: `len` consecutive difference-map entries equal to (ds, dd).
struct Symbol {
  std::int64_t ds = 0;
  std::int64_t dd = 0;
  std::uint64_t len = 0;
  friend bool operator==(const Symbol&, const Symbol&) = default;
};

// NESTED: a run of `len` elements starting at (s, d) relative to its block, strides (ss, sd).
struct Run {
  std::uint64_t s = 0;
  std::uint64_t d = 0;
  std::uint64_t len = 0;
  std::int64_t ss = 0;
  std::int64_t sd = 0;
  friend bool operator==(const Run&, const Run&) = default;
};
// A block of runs [first_run, first_run + run_count) repeated `count` times, block k starting
// at (s + k*os, d + k*od).
struct Nest {
  std::uint64_t s = 0;
  std::uint64_t d = 0;
  std::uint64_t count = 0;
  std::int64_t os = 0;
  std::int64_t od = 0;
  std::uint32_t first_run = 0;
  std::uint32_t run_count = 0;
  friend bool operator==(const Nest&, const Nest&) = default;
};

// AABLK's compact stored form: per block, one side's element offset and the length, 32 bits
// each; the other side is implicit (each block follows the previous one there), as it is in
// every pack and unpack relation. 8 bytes a block instead of Block's 24: an irregular indexed
// type's blocks then take as much memory as the program's own displacement and length arrays.
struct PackedBlock {
  std::uint32_t x = 0;
  std::uint32_t len = 0;
};
static_assert(sizeof(PackedBlock) == 8);
enum class ImplicitSide : std::uint8_t { kNone, kDestination, kSource };

class EncodedRelation {
 public:
  EncodedRelation() = default;
  static Result<EncodedRelation> Encode(const Relation& relation, Encoding encoding);

  [[nodiscard]] Encoding encoding() const noexcept { return encoding_; }
  // Bytes of the stored encoding the executor reads (pairs, blocks, symbols, dictionary+keys,
  // nests+runs); the fixed-size header is not counted, as in the paper's figure.
  [[nodiscard]] std::uint64_t size_bytes() const noexcept;
  [[nodiscard]] std::uint64_t tuple_count() const noexcept { return tuple_count_; }
  [[nodiscard]] std::uint64_t src_extent() const noexcept { return src_extent_; }
  [[nodiscard]] std::uint64_t dst_extent() const noexcept { return dst_extent_; }
  [[nodiscard]] std::size_t elem_size() const noexcept { return elem_size_; }
  [[nodiscard]] Order order() const noexcept { return order_; }
  [[nodiscard]] std::uint64_t payload_bytes() const noexcept { return tuple_count_ * elem_size_; }
  // Number of symbols (or pairs, blocks, runs executed) the executor steps through.
  [[nodiscard]] std::uint64_t decode_steps() const noexcept;

  // Decodes back to the tuples, in the relation's order.
  [[nodiscard]] std::vector<Tuple> Decode() const;
  [[nodiscard]] Result<Relation> ToRelation() const;

  // The stored form, for tests and tools.
  [[nodiscard]] const std::vector<Tuple>& pairs() const noexcept { return pairs_; }
  // AABLK: the blocks, decoded; stored either as PackedBlock (implicit_side() names the side
  // left out, implicit_base() where it starts) or, when neither side follows on or an offset
  // passes 2^32, as Block (wide_blocks()).
  [[nodiscard]] std::vector<Block> blocks() const;
  [[nodiscard]] ImplicitSide implicit_side() const noexcept { return implicit_; }
  [[nodiscard]] std::uint64_t implicit_base() const noexcept { return implicit_base_; }
  [[nodiscard]] const std::vector<PackedBlock>& packed_blocks() const noexcept { return packed_; }
  [[nodiscard]] const std::vector<Block>& wide_blocks() const noexcept { return blocks_; }
  // DMRLE: the symbol sequence; DMRLEC: the dictionary of unique symbols.
  [[nodiscard]] const std::vector<Symbol>& symbols() const noexcept { return symbols_; }
  [[nodiscard]] const std::vector<std::uint64_t>& key_words() const noexcept { return keys_; }
  [[nodiscard]] std::uint64_t key_count() const noexcept { return key_count_; }
  [[nodiscard]] unsigned key_bits() const noexcept { return key_bits_; }
  [[nodiscard]] const std::vector<Nest>& nests() const noexcept { return nests_; }
  [[nodiscard]] const std::vector<Run>& runs() const noexcept { return runs_; }

 private:
  Encoding encoding_ = Encoding::kAapair;
  std::uint64_t tuple_count_ = 0;
  std::uint64_t src_extent_ = 0;
  std::uint64_t dst_extent_ = 0;
  std::size_t elem_size_ = 1;
  Order order_ = Order::kSourceFirst;

  std::vector<Tuple> pairs_;          // AAPAIR
  std::vector<Block> blocks_;         // AABLK, wide form
  std::vector<PackedBlock> packed_;   // AABLK, compact form
  ImplicitSide implicit_ = ImplicitSide::kNone;
  std::uint64_t implicit_base_ = 0;
  void StoreBlocks(std::vector<Block> blocks);
  std::vector<Symbol> symbols_;       // DMRLE sequence, or DMRLEC dictionary
  std::vector<std::uint64_t> keys_;   // DMRLEC: key_count_ keys of key_bits_ bits, LSB first
  std::uint64_t key_count_ = 0;
  unsigned key_bits_ = 0;
  std::vector<Nest> nests_;           // NESTED
  std::vector<Run> runs_;
};

// The DMRLE symbol sequence of a relation (the difference map starts from (0, 0), so the first
// symbol carries (s0, d0)).
std::vector<Symbol> DifferenceMapRle(std::span<const Tuple> tuples);

// Minimum power-of-two key width (1, 2, 4, 8, 16, 32 bits) for `unique_symbols` symbols.
unsigned DmrlecKeyBits(std::uint64_t unique_symbols) noexcept;

enum class Goal : std::uint8_t { kSmallest, kFastest };
// Encodes the relation in every encoding and keeps the smallest, or the one expected to run
// fastest: fewest decode steps per byte moved, then smallest (see docs/relations.md).
Result<EncodedRelation> EncodeAuto(const Relation& relation, Goal goal);

}  // namespace augur::relations
