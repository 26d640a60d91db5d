// The messages of augur's protocols, as they travel between ranks: the header in front of every
// bounce-slot message (full and short eager forms), direct-placement credits and their arm word,
// the immediate of a direct write, and the run list of a non-contiguous rendezvous. The transport's
// own formats (QP addresses, remote buffers) are nic/augur/nic/wire.h. Every struct has its layout
// pinned; multi-byte fields are big-endian on the wire; every field from a peer is validated by
// its parse function before use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "augur/nic/wire.h"
#include "augur/status.h"

namespace augur::host::proto {

// The header in front of every message one rank puts into another's bounce ring (eager data,
// rendezvous requests, credit returns). Written by a peer, so nothing in it is trusted until
// parse_message has checked it against what the receiver knows (peer rank, expected sequence
// number, slot capacity).
enum class MsgType : std::uint8_t {
  kEager = 1,   // payload follows the header in the same slot
  kRts = 2,     // rendezvous: payload stays at the sender; a RemoteBuffer follows the header
  kFin = 3,     // rendezvous: the receiver has read the payload
  kCredit = 4,  // returns bounce slots only
  // A receiver withdraws a direct-placement credit (a cancelled receive); the sender answers
  // with kRevokeAck once it will no longer use it. context = credit slot, length = generation.
  kRevoke = 5,
  kRevokeAck = 6,
  // Rendezvous from a non-contiguous source: a run list (RunListHeader + RemoteRun[count])
  // follows the header instead of one RemoteBuffer.
  kRtsRuns = 7,
  // The short form of a kEager header (ShortEagerHeader); parse_message returns it as kEager.
  kEagerShort = 8,
  // Never in a header on the wire: the receiver's name for a direct write's arrival (an RDMA
  // WRITE with immediate into a credited buffer; see CreditEntry).
  kDirect = 0x80,
};

struct MsgHeader {
  static constexpr std::uint8_t kVersion = 1;
  MsgType type = MsgType::kEager;
  std::uint8_t version = kVersion;
  // The writer's count of bounce slots it has freed (the reader's messages it is done with),
  // cumulative mod 2^16: credits ride on every message, so a conversation needs no credit writes.
  std::uint16_t credits = 0;
  std::uint32_t src = 0;      // writer's rank
  std::uint32_t context = 0;  // communicator context id
  std::int32_t tag = 0;       // >= 0
  std::uint32_t seq = 0;      // per ordered pair of ranks; detects loss, duplication, reordering
  std::uint32_t length = 0;   // eager: payload bytes in the slot; RTS: whole message size
};
static_assert(sizeof(MsgHeader) == 24);
static_assert(offsetof(MsgHeader, src) == 4);
static_assert(offsetof(MsgHeader, context) == 8);
static_assert(offsetof(MsgHeader, tag) == 12);
static_assert(offsetof(MsgHeader, seq) == 16);
static_assert(offsetof(MsgHeader, length) == 20);

// An eager header in 8 bytes instead of 24, used when context and tag fit 16 bits (nearly every
// message). Under rxe a message's latency grows with its bytes on the wire and steps up by ~2 us
// between 72 and 80 of them (docs/runtime.md), so the full header alone pushed a 64-byte
// payload over the step. What it leaves out is implied: the source by the QP it arrived on, the
// length by the bytes that arrived, the version by the type, and the sequence number's high 24
// bits by the receiver's count (the low 8 still catch loss, duplication and reordering).
struct ShortEagerHeader {
  MsgType type = MsgType::kEagerShort;
  std::uint8_t seq_low = 0;
  std::uint16_t credits = 0;
  std::uint16_t context = 0;
  std::uint16_t tag = 0;
};
static_assert(sizeof(ShortEagerHeader) == 8);
static_assert(offsetof(ShortEagerHeader, credits) == 2);
static_assert(offsetof(ShortEagerHeader, context) == 4);
static_assert(offsetof(ShortEagerHeader, tag) == 6);

// Arm words riding on a message (docs/early.md, "Arm words on messages"). A receiver that arms
// a credit whose entry the sender already holds need not write the 8-byte arm word by RDMA: it
// may set kCarriesArms in the type byte of its next message to that peer (either header form)
// and put an ArmBlock and `count` arm words (encode_arm's bytes) between the header and the body.
// The sender applies each word to its credit table when it handles the message, unless the
// slot's word there is of a later generation (an RDMA write that overtook it).
inline constexpr std::uint8_t kCarriesArms = 0x40;
inline constexpr std::uint32_t kMaxCarriedArms = 7;
struct ArmBlock {
  std::uint8_t count = 0;                        // 1 to kMaxCarriedArms
  std::uint8_t slot[kMaxCarriedArms] = {};       // credit slot of each word; unused entries 0
};
static_assert(sizeof(ArmBlock) == 8);
static_assert(offsetof(ArmBlock, slot) == 1);
constexpr std::size_t arm_block_bytes(std::size_t count) noexcept {
  return count == 0 ? 0 : sizeof(ArmBlock) + count * sizeof(std::uint64_t);
}
// Arm words as parse_message returns them (count 0: the message carried none).
struct CarriedArms {
  std::uint32_t count = 0;
  std::uint8_t slot[kMaxCarriedArms] = {};
  std::uint64_t word[kMaxCarriedArms] = {};
};

// The header bytes a message of this type, context and tag is sent with.
constexpr std::size_t msg_header_bytes(MsgType type, std::uint32_t context, std::int32_t tag) noexcept {
  return type == MsgType::kEager && context <= 0xffff && tag >= 0 && tag <= 0xffff ? sizeof(ShortEagerHeader)
                                                                                   : sizeof(MsgHeader);
}

// Direct placement. A receiver that has posted a receive for a peer's message writes a credit
// into that peer's credit table (one row of entries per receiver, in the sender's memory): where
// the receive buffer is, how big, and for which (context, tag). A sender whose next message
// matches an armed, still valid credit RDMA-WRITEs the payload straight into that buffer, with
// immediate data naming the credit slot and the length (direct_imm). The arm word comes last in
// the entry so that the sender, reading it before and after the fields (a seqlock), never uses
// a half-written entry; a predicted credit is written ahead as kPending and armed later by an
// 8-byte write of the arm word alone.
// kLanding: armed, but the buffer is a landing zone (runtime memory set aside for a predicted
// receive that is not posted yet, docs/early.md), not a receive: the next message with the
// envelope may be written there at any size up to the capacity, and it is not void when another
// message with the envelope goes first (no receive is waiting on it); it ends when used or revoked.
enum class CreditState : std::uint8_t { kFree = 0, kPending = 1, kArmed = 2, kLanding = 3 };

struct CreditArm {
  CreditState state = CreditState::kFree;
  std::uint32_t generation = 0;  // 24 bits: which issue of this slot
  // The receiver's count of messages received from the sender when the receive was posted: a
  // message with this sequence number or later that matches (context, tag) and was not sent
  // through this credit takes the receive, and makes the credit void.
  std::uint32_t valid_from_seq = 0;
};

struct CreditEntry {
  std::uint64_t addr = 0;
  std::uint32_t rkey = 0;
  std::uint32_t capacity = 0;  // bytes
  std::uint32_t context = 0;
  std::int32_t tag = 0;        // >= 0: credits are never given for ANY_TAG receives
  std::uint64_t arm = 0;       // CreditArm, encoded
};
static_assert(sizeof(CreditEntry) == 32);
static_assert(offsetof(CreditEntry, capacity) == 12);
static_assert(offsetof(CreditEntry, tag) == 20);
static_assert(offsetof(CreditEntry, arm) == 24);
inline constexpr std::size_t kCreditArmOffset = offsetof(CreditEntry, arm);
inline constexpr std::uint32_t kMaxCreditSlots = 255;        // fits the immediate's top byte
inline constexpr std::uint32_t kMaxDirectBytes = (1u << 24) - 1;

// The immediate of a direct write: slot in the top 8 bits, payload length in the low 24.
constexpr std::uint32_t direct_imm(std::uint32_t slot, std::uint32_t length) noexcept { return slot << 24 | length; }
constexpr std::uint32_t direct_imm_slot(std::uint32_t imm) noexcept { return imm >> 24; }
constexpr std::uint32_t direct_imm_length(std::uint32_t imm) noexcept { return imm & kMaxDirectBytes; }

// The body of a kRtsRuns message: where the sender's runs are, in packed message order. The
// receiver READs each run (or several slices of it) into the matching part of its own layout.
struct RunListHeader {
  static constexpr std::uint32_t kMagic = 0x4155524c;  // "AURL"
  static constexpr std::uint16_t kVersion = 1;
  std::uint32_t magic = kMagic;
  std::uint16_t version = kVersion;
  std::uint16_t reserved = 0;
  std::uint32_t count = 0;     // runs that follow (>= 1)
  std::uint32_t reserved2 = 0;
  std::uint64_t length = 0;    // the message: the runs' lengths sum to exactly this
};
static_assert(sizeof(RunListHeader) == 24);
static_assert(offsetof(RunListHeader, count) == 8);
static_assert(offsetof(RunListHeader, length) == 16);

struct RemoteRun {
  std::uint64_t addr = 0;
  std::uint32_t length = 0;  // > 0
  std::uint32_t rkey = 0;
  friend bool operator==(const RemoteRun&, const RemoteRun&) = default;
};
static_assert(sizeof(RemoteRun) == 16);
static_assert(offsetof(RemoteRun, length) == 8);
static_assert(offsetof(RemoteRun, rkey) == 12);

// Runs a run list of `body_bytes` (an eager slot's payload) can carry.
constexpr std::uint32_t max_remote_runs(std::uint32_t body_bytes) noexcept {
  return body_bytes < sizeof(RunListHeader) ? 0
                                            : static_cast<std::uint32_t>((body_bytes - sizeof(RunListHeader)) / sizeof(RemoteRun));
}
constexpr std::size_t run_list_bytes(std::size_t count) noexcept { return sizeof(RunListHeader) + count * sizeof(RemoteRun); }

// What the reader expects of the next header from one peer.
struct MsgExpect {
  std::uint32_t src;          // the peer this QP/ring belongs to
  std::uint32_t seq;          // next sequence number from that peer
  std::uint32_t slot_bytes;   // capacity of the slot the header arrived in, header included
};

// Encoding to and from the wire. parse_* reject wrong sizes, magic, versions and out-of-range
// fields with kProtocol and a message naming the field.
// The full 24-byte form, whatever the type.
void encode(const MsgHeader& in, std::span<std::byte, sizeof(MsgHeader)> out) noexcept;
// The form a sender uses: short where msg_header_bytes allows it, else full. Returns the bytes
// written (msg_header_bytes(in.type, in.context, in.tag)).
std::size_t encode_msg_header(const MsgHeader& in, std::span<std::byte, sizeof(MsgHeader)> out) noexcept;
// Marks the header at `header` (either form) as carrying arms and writes the block and words at
// `out` (arm_block_bytes(arms.count) bytes, 1 <= count <= kMaxCarriedArms).
void encode_arms(std::byte* header, const CarriedArms& arms, std::byte* out) noexcept;
// The arm word as it sits in memory (8 bytes, big-endian), so that it can be written and read
// as one aligned word.
std::uint64_t encode_arm(const CreditArm& a) noexcept;
Result<CreditArm> parse_arm(std::uint64_t raw);
void encode(const CreditEntry& in, std::span<std::byte, sizeof(CreditEntry)> out) noexcept;
// The fields of an entry (its arm word is parsed separately); rejects ANY_TAG, oversized
// capacities and null buffers.
Result<CreditEntry> parse_credit_entry(std::span<const std::byte> in);
// `out` must be run_list_bytes(runs.size()) long; `length` is the sum of the runs' lengths.
void encode_run_list(std::uint64_t length, std::span<const RemoteRun> runs, std::span<std::byte> out) noexcept;
// Rejects a wrong size, magic or version, non-zero reserved fields, no runs or more than
// `max_runs`, a zero-length run, a null or wrapping address, and lengths that do not sum to
// exactly `msg_length` (the header's length).
Result<std::vector<RemoteRun>> parse_run_list(std::span<const std::byte> in, std::uint64_t msg_length,
                                              std::uint32_t max_runs);
// A message as parse_message returns it: its header in the full form, whichever form arrived
// (a short eager header comes back as kEager with source, sequence and length filled in), and
// the body that followed it.
struct Message {
  MsgHeader header;
  std::span<const std::byte> body;
  CarriedArms arms;  // arm words between header and body (their slots are checked by the channel)
};
// `in` is the whole slot as received (byte_len of the completion): the header and what follows.
Result<Message> parse_message(std::span<const std::byte> in, const MsgExpect& expect);


}  // namespace augur::host::proto
