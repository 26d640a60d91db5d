// Inlining hints for the per-message path.
#pragma once

// AUGUR_HOT_PATH flattens a function of the per-message path: every call in it is inlined, across
// libraries when link-time optimisation is on (AUGUR_LTO). Calls that GCC left out of line cost
// little on hardware but measurably under qemu's emulation, where each return is an indirect
// jump looked up at run time: flattening the eager send, the completion handler and the eager
// delivery took augur-perf-lat's off/raw ratio from 1.19 to 1.16 at 1 byte (docs/runtime.md).
// AUGUR_COLD_PATH keeps a rare branch (and everything it calls) out of a flattened function;
// without it, flatten inlines whatever a branch reaches (the loopback device once added 70
// instructions to every send on the verbs path: docs/runtime.md).
#if defined(__GNUC__) && !defined(__clang__)
#define AUGUR_HOT_PATH [[gnu::flatten]]
#else
#define AUGUR_HOT_PATH
#endif
#define AUGUR_COLD_PATH [[gnu::noinline]]
