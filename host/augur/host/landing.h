// LandingZone: registered runtime memory set aside for one predicted receive that is not posted
// yet (docs/early.md). The receiver gives the sender a landing credit for it, so an early message
// is written there by RDMA at once instead of waiting as an RTS (above the eager limit) for its
// receive. The program's buffer is never touched before its receive is posted (MPI: it may still
// be read); at the match the zone's data goes into it: the whole pages by remapping them into
// place (mremap), the partial pages at the edges by copy, or all by copy when that is cheaper or
// the page offsets do not line up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "augur/nic/verbs.h"
#include "augur/status.h"

namespace augur::host {

class LandingZone {
 public:
  // Room for `capacity` bytes at any offset within a page (one page more than the data needs),
  // registered for remote write.
  static Result<std::unique_ptr<LandingZone>> create(const nic::ProtectionDomain& pd, std::size_t capacity);
  ~LandingZone();
  LandingZone(const LandingZone&) = delete;
  LandingZone& operator=(const LandingZone&) = delete;

  // Where the data of the next use starts: at the expected receive buffer's offset within its
  // page, so that the buffer's whole pages line up with the zone's.
  void aim_at(std::uintptr_t expected_buf) noexcept;
  [[nodiscard]] std::byte* data() const noexcept { return base_ + offset_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] std::uint32_t rkey() const noexcept { return mr_ ? mr_->rkey() : 0; }
  // False once a remap has given its pages away: then it can only be destroyed.
  [[nodiscard]] bool reusable() const noexcept { return mr_.has_value(); }

  struct Delivered {
    std::size_t copied = 0;
    std::size_t remapped = 0;  // bytes moved by remapping whole pages
  };
  // Puts the first `n` bytes of data() into [buf, buf + n): whole pages by remap when the offsets
  // within a page agree and at least `remap_min` bytes of whole pages would move (0: never), the
  // rest by copy. A remap deregisters the zone first (its MR would still reach the moved pages).
  // Memory-release watchers hear of the remapped range, so no registration cache keeps the
  // buffer's old pages. A failed remap (the process's map count limit) falls back to the copy.
  Delivered deliver(void* buf, std::size_t n, std::size_t remap_min);

  static std::size_t page_size() noexcept;

 private:
  LandingZone(std::byte* base, std::size_t bytes, std::size_t capacity) : base_(base), bytes_(bytes), capacity_(capacity) {}
  std::byte* base_;
  std::size_t bytes_;     // mapped
  std::size_t capacity_;  // data bytes
  std::size_t offset_ = 0;
  std::optional<nic::MemoryRegion> mr_;
};

}  // namespace augur::host
