#include "augur/host/placement.h"

#include <hwloc.h>

#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include <memory>

namespace augur::host {

namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const noexcept { hwloc_topology_destroy(t); }
};
struct BitmapDeleter {
  void operator()(hwloc_bitmap_s* b) const noexcept { hwloc_bitmap_free(b); }
};
using Topology = std::unique_ptr<hwloc_topology, TopologyDeleter>;
using Bitmap = std::unique_ptr<hwloc_bitmap_s, BitmapDeleter>;

// With `io`, hwloc also discovers PCI devices (adapters are I/O objects); that loads its PCI
// plugin, so it is asked for only when the adapter has a PCI device behind it.
Result<Topology> load_topology(bool io) {
  hwloc_topology_t t = nullptr;
  if (hwloc_topology_init(&t) != 0) return Status(Code::kInternal, "hwloc_topology_init failed");
  Topology topo(t);
  if (io) hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_load(t) != 0) return Status(Code::kInternal, "hwloc_topology_load failed");
  return topo;
}

std::string list_of(hwloc_const_bitmap_t set) {
  char* s = nullptr;
  if (hwloc_bitmap_list_asprintf(&s, set) < 0 || s == nullptr) return "?";
  std::string out(s);
  free(s);  // NOLINT: allocated by hwloc with malloc
  return out;
}

}  // namespace

Result<Placement> choose_assist_core(std::string_view device, int requested_core) {
  // A soft device (rxe) has no `device` link in sysfs: no PCI locality to find.
  const bool pci = ::access(("/sys/class/infiniband/" + std::string(device) + "/device").c_str(), F_OK) == 0;
  AUGUR_ASSIGN_OR_RETURN(Topology topo, load_topology(pci));
  hwloc_topology_t t = topo.get();
  const int cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
  if (cores <= 0) return Status(Code::kInternal, "hwloc finds no cores");
  Placement p;
  if (requested_core >= 0) {
    if (requested_core >= cores) {
      return Status(Code::kInvalidArgument, "AUGUR_ASSIST_CORE=" + std::to_string(requested_core) + ": this machine has " +
                                                std::to_string(cores) + " cores");
    }
    p.core = requested_core;
    p.why = "core " + std::to_string(requested_core) + " as AUGUR_ASSIST_CORE asks";
  }
  // The adapter's locality: the CPUs of the first non-I/O ancestor of its OS device.
  Bitmap locality(hwloc_bitmap_dup(hwloc_topology_get_complete_cpuset(t)));
  for (hwloc_obj_t os = hwloc_get_next_osdev(t, nullptr); os != nullptr; os = hwloc_get_next_osdev(t, os)) {
    if (os->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS || os->name == nullptr || device != os->name) continue;
    if (hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t, os); anc != nullptr && anc->cpuset != nullptr) {
      hwloc_bitmap_copy(locality.get(), anc->cpuset);
      p.device_placed = true;
    }
    break;
  }
  if (p.core >= 0) {
    hwloc_obj_t c = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, static_cast<unsigned>(p.core));
    p.cpus = list_of(c->cpuset);
    return p;
  }
  Bitmap app(hwloc_bitmap_alloc());
  if (hwloc_get_cpubind(t, app.get(), HWLOC_CPUBIND_THREAD) != 0) hwloc_bitmap_fill(app.get());
  // The last core of the locality that the application is not bound to; else the last core of
  // the locality (an unbound application can run anywhere, and core 0 takes most OS work).
  hwloc_obj_t pick = nullptr, fallback = nullptr;
  for (int i = cores - 1; i >= 0 && pick == nullptr; --i) {
    hwloc_obj_t c = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, static_cast<unsigned>(i));
    if (!hwloc_bitmap_intersects(c->cpuset, locality.get())) continue;
    if (fallback == nullptr) fallback = c;
    if (!hwloc_bitmap_intersects(c->cpuset, app.get())) pick = c;
  }
  if (pick == nullptr) pick = fallback;
  if (pick == nullptr) return Status(Code::kInternal, "no core in the adapter's locality");
  p.core = static_cast<int>(pick->logical_index);
  p.cpus = list_of(pick->cpuset);
  const std::string rule = hwloc_bitmap_intersects(pick->cpuset, app.get())
                               ? "the last core there (the application may run on every core)"
                               : "the last core there that the application is not bound to";
  p.why = p.device_placed ? "near " + std::string(device) + " (CPUs " + list_of(locality.get()) + "): " + rule
                          : "hwloc cannot place " + std::string(device) +
                                " (no PCI locality; a soft device such as rxe has none), so among all cores: " + rule;
  return p;
}

Status bind_this_thread(const Placement& p) {
  AUGUR_ASSIGN_OR_RETURN(Topology topo, load_topology(false));
  hwloc_obj_t c = hwloc_get_obj_by_type(topo.get(), HWLOC_OBJ_CORE, static_cast<unsigned>(p.core));
  if (c == nullptr) return Status(Code::kInvalidArgument, "no core " + std::to_string(p.core));
  if (hwloc_set_cpubind(topo.get(), c->cpuset, HWLOC_CPUBIND_THREAD) != 0) {
    return errno_status(errno, "hwloc_set_cpubind(core " + std::to_string(p.core) + ")");
  }
  return Status::Ok();
}

}  // namespace augur::host
