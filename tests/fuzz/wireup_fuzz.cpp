// Connection wire-up (host/wireup_wire.h): the header of a message read from a TCP connection to
// or from a rank's wire-up listener (anyone on the network may connect), and the listener entry
// a rank published through the bootstrap. Input: one selector byte (even: header, odd: entry),
// then for the header the receiver's own parameters (self, size, nonce, the peer it expects or
// -1), then the bytes.
#include <string_view>

#include "fuzz_util.h"
#include "wireup_wire.h"

namespace wu = augur::host::wireup;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  augur::fuzz::Input in(data, size);
  if ((in.take<std::uint8_t>() & 1) != 0) {
    const std::string_view s(reinterpret_cast<const char*>(in.rest().data()), in.rest().size());
    augur::Result<wu::Listen> l = wu::parse_listen(s, 5);
    if (!l.ok()) {
      AUGUR_FUZZ_CHECK(l.status().code() == augur::Code::kProtocol);
      AUGUR_FUZZ_CHECK(l.status().message().find("rank 5") != std::string::npos);
      return 0;
    }
    AUGUR_FUZZ_CHECK(!l->host.empty() && l->host.size() <= 255 && l->port != 0);
    // The canonical form parses back to the same entry and is what was given.
    AUGUR_FUZZ_CHECK(wu::encode_listen(*l) == s);
    return 0;
  }
  wu::Expect e;
  e.self = in.take<std::uint32_t>() % 8;
  e.size = in.take<std::uint32_t>() % 9;
  e.nonce = in.take<std::uint64_t>();
  e.address_bytes = 88;  // the engine's channel address (kAddressBytes)
  e.from = static_cast<std::int64_t>(in.take<std::int8_t>()) % 9;
  augur::Result<wu::Header> h = wu::parse_header(in.rest(), e);
  if (!h.ok()) {
    AUGUR_FUZZ_CHECK(h.status().code() == augur::Code::kProtocol);
    return 0;
  }
  // Accepted: every field is what this job's peer sends, so the engine may index by `from` and
  // read exactly address_bytes more.
  AUGUR_FUZZ_CHECK(in.rest().size() >= wu::kHeaderBytes);
  AUGUR_FUZZ_CHECK(h->from < e.size && h->from != e.self && h->to == e.self && h->nonce == e.nonce);
  AUGUR_FUZZ_CHECK(e.from < 0 || h->from == static_cast<std::uint32_t>(e.from));
  AUGUR_FUZZ_CHECK(h->type >= 1 && h->type <= 3);
  AUGUR_FUZZ_CHECK(h->address_bytes == (h->type == 3 ? 0u : e.address_bytes));
  // The header re-encodes to the bytes it was parsed from (the address that follows may not have
  // arrived yet: only its size enters the header).
  const wu::Bytes again = wu::encode(static_cast<wu::Type>(h->type), h->from, h->to, h->nonce,
                                     std::vector<std::byte>(h->address_bytes));
  AUGUR_FUZZ_CHECK(augur::fuzz::same_bytes(std::span<const unsigned char>(again).first(wu::kHeaderBytes), in.rest().first(wu::kHeaderBytes)));
  return 0;
}
