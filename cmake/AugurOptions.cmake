# Build options shared by every target.
option(AUGUR_WERROR "Treat compiler warnings as errors (CI turns this on)" OFF)
option(AUGUR_BUILD_TESTS "Build the GoogleTest suites" ON)
option(AUGUR_BUILD_PERF "Build the benchmarks in perf/" ON)
set(AUGUR_SANITIZE "" CACHE STRING "Sanitizers: '', 'address' (ASan+UBSan) or 'thread' (TSan)")
set_property(CACHE AUGUR_SANITIZE PROPERTY STRINGS "" address thread)

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "Build type" FORCE)
endif()

# Every augur target calls augur_target_defaults(); third-party code is not touched.
add_library(augur_warnings INTERFACE)
target_compile_options(augur_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  # -Wnull-dereference is left out: GCC 12 reports false positives inside libstdc++ at -O2.
  -Woverloaded-virtual -Wconversion -Wsign-conversion -Wdouble-promotion
  -Wformat=2 -Wimplicit-fallthrough
  # GCC 12 at -O3 reports a false -Wrestrict inside std::string's operator+ (GCC PR 105329).
  $<$<AND:$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-restrict>
  $<$<BOOL:${AUGUR_WERROR}>:-Werror>)
# C sources (the MPI C examples, the trace interposer) get the C-compatible subset.
add_library(augur_warnings_c INTERFACE)
target_compile_options(augur_warnings_c INTERFACE
  -Wall -Wextra -Wshadow -Wformat=2 $<$<BOOL:${AUGUR_WERROR}>:-Werror>)

# Sanitizer builds are Debug (assertions on) but at -O1, as the sanitizers' authors advise: at -O0
# an ASan MPI suite on soft-RoCE took 1.5-3x as long (datatypes at 3 ranks 111-129 s against
# 37-67 s), and the sanitizer guests are most of CI's time.
if(NOT AUGUR_SANITIZE STREQUAL "")
  add_compile_options($<$<CONFIG:Debug>:-O1>)
endif()
if(AUGUR_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(AUGUR_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT AUGUR_SANITIZE STREQUAL "")
  message(FATAL_ERROR "AUGUR_SANITIZE must be '', 'address' or 'thread', not '${AUGUR_SANITIZE}'")
endif()

# libFuzzer harnesses (tests/fuzz, docs/fuzzing.md): clang only. Every object gets coverage
# counters and ASan+UBSan so the fuzzer sees into the parsers; only the harnesses link its main.
option(AUGUR_FUZZ "Build the libFuzzer harnesses in tests/fuzz (clang only)" OFF)
set(AUGUR_FUZZ_ACTIVE OFF)
if(AUGUR_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(WARNING "AUGUR_FUZZ needs clang (libFuzzer); the fuzz harnesses are not built (try: cmake --preset fuzz)")
  elseif(NOT AUGUR_SANITIZE STREQUAL "")
    message(FATAL_ERROR "AUGUR_FUZZ brings its own sanitizers; leave AUGUR_SANITIZE empty")
  else()
    set(AUGUR_FUZZ_ACTIVE ON)
    add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link,address,undefined;-fno-omit-frame-pointer;-fno-sanitize-recover=undefined>")
    add_link_options("$<$<LINK_LANGUAGE:C,CXX>:-fsanitize=address,undefined>")
  endif()
endif()

function(augur_target_defaults target)
  target_link_libraries(${target} PRIVATE augur_warnings)
  if(AUGUR_LTO_ACTIVE)  # GCC's linker plugin would optimise fat LTO objects at every link otherwise
    target_link_options(${target} PRIVATE $<$<NOT:$<BOOL:$<TARGET_PROPERTY:AUGUR_LTO_LINK>>>:-fno-lto>)
  endif()
endfunction()

# Link-time optimisation for what users run: libaugur_mpi and the benchmarks. A message's path
# crosses common/, nic/ and host/, whose calls only LTO can inline (scripts/lat-ab under
# soft-RoCE: off/raw 1.30 -> 1.27 and 1.275 -> 1.21 at 1 byte, docs/runtime.md). The core libraries compile fat
# LTO objects and every other target links with -fno-lto, so the tests do not pay for LTO.
option(AUGUR_LTO "Link-time optimisation of libaugur_mpi and the benchmarks (optimised GCC builds without sanitizers)" ON)
set(AUGUR_LTO_ACTIVE OFF)
if(AUGUR_LTO AND AUGUR_SANITIZE STREQUAL "" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU"
   AND CMAKE_BUILD_TYPE MATCHES "^(Release|RelWithDebInfo)$")
  set(AUGUR_LTO_ACTIVE ON)
endif()
function(augur_lto_objects target)  # a core library: objects usable with and without LTO
  if(AUGUR_LTO_ACTIVE)
    target_compile_options(${target} PRIVATE -flto=auto -ffat-lto-objects)
  endif()
endfunction()
function(augur_lto_link target)  # a shared library or program optimised across the core libraries
  if(AUGUR_LTO_ACTIVE)
    set_target_properties(${target} PROPERTIES AUGUR_LTO_LINK ON)
    target_compile_options(${target} PRIVATE -flto=auto)
    target_link_options(${target} PRIVATE -flto=auto)
  endif()
endfunction()
