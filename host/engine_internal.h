// Helpers shared by the engine's .cpp files (host/engine*.cpp), which split one class, Engine, by
// concern. Internal to libaugur_host: not under host/augur/, not installed. Inline because they
// are on every message's path and each file must be able to inline them without LTO's help.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "augur/host/engine.h"

namespace augur::host {

// Inline here, not in engine.cpp: with one definition out of line, LTO's inliner kept calls to
// it in start_send and on_direct (augur-perf-lat) that the single-file engine had inlined.
inline void Engine::finish(Request& r, Path path, Status st) {
  r.path = path;
  r.status = std::move(st);
  r.done.store(true, std::memory_order_seq_cst);  // seq_cst: see ProgressDriver::wake_waiters
  driver_.note_completion();
}

}  // namespace augur::host
