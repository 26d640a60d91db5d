// Where the communication-assist thread runs: a core close to the adapter, not one the
// application thread is bound to. Uses hwloc's topology with I/O devices to find the adapter's
// OS device (an OpenFabrics device named like the verbs device) and its CPU locality.
#pragma once

#include <string>
#include <string_view>

#include "augur/status.h"

namespace augur::host {

struct Placement {
  int core = -1;           // hwloc logical index of the chosen core
  std::string cpus;        // its PUs (OS indices), as a list, for messages
  bool device_placed = false;  // hwloc knew the adapter's locality
  std::string why;         // one sentence: how the core was chosen
};

// Chooses the core for the assist thread of a process whose calling thread is the application
// thread. `requested_core` >= 0 (AUGUR_ASSIST_CORE) forces that logical core index.
Result<Placement> choose_assist_core(std::string_view device, int requested_core);

// Binds the calling thread to the core chosen by choose_assist_core.
Status bind_this_thread(const Placement& p);

}  // namespace augur::host
