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

if(AUGUR_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(AUGUR_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT AUGUR_SANITIZE STREQUAL "")
  message(FATAL_ERROR "AUGUR_SANITIZE must be '', 'address' or 'thread', not '${AUGUR_SANITIZE}'")
endif()

function(augur_target_defaults target)
  target_link_libraries(${target} PRIVATE augur_warnings)
endfunction()
