// LandingZone (host/augur/host/landing.h; docs/early.md).

#include "augur/host/landing.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "augur/nic/mem_release.h"

namespace augur::host {

std::size_t LandingZone::page_size() noexcept {
  static const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

Result<std::unique_ptr<LandingZone>> LandingZone::create(const nic::ProtectionDomain& pd, std::size_t capacity) {
  const std::size_t page = page_size();
  const std::size_t bytes = (capacity + page - 1) / page * page + page;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return errno_status(errno, "mmap of a landing zone");
  std::unique_ptr<LandingZone> z(new LandingZone(static_cast<std::byte*>(p), bytes, capacity));
  AUGUR_ASSIGN_OR_RETURN(nic::MemoryRegion mr,
                         nic::MemoryRegion::register_memory(pd, p, bytes, nic::kLocalWrite | nic::kRemoteWrite));
  z->mr_.emplace(std::move(mr));
  return z;
}

LandingZone::~LandingZone() {
  mr_.reset();  // deregister before the pages go
  (void)::munmap(base_, bytes_);
}

void LandingZone::aim_at(std::uintptr_t expected_buf) noexcept { offset_ = expected_buf % page_size(); }

LandingZone::Delivered LandingZone::deliver(void* buf, std::size_t n, std::size_t remap_min) {
  Delivered d;
  const std::size_t page = page_size();
  const auto b = reinterpret_cast<std::uintptr_t>(buf);
  const std::uintptr_t first = (b + page - 1) / page * page;  // the buffer's whole pages
  const std::uintptr_t last = (b + n) / page * page;
  const bool aligned = b % page == offset_;
  if (remap_min == 0 || !aligned || !mr_ || last <= first || last - first < remap_min) {
    if (n > 0) std::memcpy(buf, data(), n);
    d.copied = n;
    return d;
  }
  const std::size_t head = first - b;
  const std::size_t whole = last - first;
  // The zone's MR pins these pages: once they are the program's, the NIC must not reach them.
  mr_.reset();
  if (head > 0) std::memcpy(buf, data(), head);
  void* moved = ::mremap(data() + head, whole, whole, MREMAP_MAYMOVE | MREMAP_FIXED, reinterpret_cast<void*>(first));
  if (moved == MAP_FAILED) {  // e.g. the map count limit: nothing moved, the data is still here
    std::memcpy(reinterpret_cast<void*>(first), data() + head, n - head);
    d.copied = n;
    return d;
  }
  // Sanitizer builds do not interpose mremap: say it here (a second report costs nothing).
  nic::note_release(reinterpret_cast<void*>(first), whole);
  const std::size_t tail = b + n - last;
  if (tail > 0) std::memcpy(reinterpret_cast<void*>(last), data() + (last - b), tail);
  d.copied = head + tail;
  d.remapped = whole;
  return d;
}

}  // namespace augur::host
