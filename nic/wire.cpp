#include "augur/nic/wire.h"

#include "augur/wire_codec.h"

namespace augur::nic {

using wire_codec::bad;
using wire_codec::Reader;
using wire_codec::Writer;

void encode(const QpAddress& in, std::span<std::byte, sizeof(QpAddress)> out) noexcept {
  Writer w(out.data());
  w.put(in.magic);
  w.put(in.version);
  w.put(in.lid);
  w.put(in.qp_num);
  w.put(in.psn);
  w.put_bytes(in.gid, sizeof in.gid);
  w.put(in.mtu);
  w.put(in.link_layer);
  w.put_bytes(in.reserved, sizeof in.reserved);
}

Result<QpAddress> parse_qp_address(std::span<const std::byte> in) {
  if (in.size() != sizeof(QpAddress)) {
    return bad("QP address", "size " + std::to_string(in.size()) + ", expected " + std::to_string(sizeof(QpAddress)));
  }
  Reader r(in.data());
  QpAddress a;
  a.magic = r.get<std::uint32_t>();
  a.version = r.get<std::uint16_t>();
  a.lid = r.get<std::uint16_t>();
  a.qp_num = r.get<std::uint32_t>();
  a.psn = r.get<std::uint32_t>();
  r.get_bytes(a.gid, sizeof a.gid);
  a.mtu = r.get<std::uint8_t>();
  a.link_layer = r.get<std::uint8_t>();
  r.get_bytes(a.reserved, sizeof a.reserved);
  if (a.magic != QpAddress::kMagic) return bad("QP address", "bad magic");
  if (a.version != QpAddress::kVersion) return bad("QP address", "version " + std::to_string(a.version));
  if (a.qp_num == 0 || a.qp_num > 0xffffff) return bad("QP address", "QP number " + std::to_string(a.qp_num));
  if (a.psn > 0xffffff) return bad("QP address", "PSN " + std::to_string(a.psn) + " exceeds 24 bits");
  if (a.mtu < 1 || a.mtu > 5) return bad("QP address", "MTU code " + std::to_string(a.mtu));
  if (a.link_layer > 1) return bad("QP address", "link layer " + std::to_string(a.link_layer));
  return a;
}

void encode(const RemoteBuffer& in, std::span<std::byte, sizeof(RemoteBuffer)> out) noexcept {
  Writer w(out.data());
  w.put(in.magic);
  w.put(in.rkey);
  w.put(in.addr);
  w.put(in.length);
}

Result<RemoteBuffer> parse_remote_buffer(std::span<const std::byte> in) {
  if (in.size() != sizeof(RemoteBuffer)) {
    return bad("remote buffer", "size " + std::to_string(in.size()) + ", expected " + std::to_string(sizeof(RemoteBuffer)));
  }
  Reader r(in.data());
  RemoteBuffer b;
  b.magic = r.get<std::uint32_t>();
  b.rkey = r.get<std::uint32_t>();
  b.addr = r.get<std::uint64_t>();
  b.length = r.get<std::uint64_t>();
  if (b.magic != RemoteBuffer::kMagic) return bad("remote buffer", "bad magic");
  if (b.addr == 0 && b.length != 0) return bad("remote buffer", "null address with non-zero length");
  if (b.addr + b.length < b.addr) return bad("remote buffer", "address range wraps around");
  return b;
}

}  // namespace augur::nic
