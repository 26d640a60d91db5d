# Every dependency comes from a Debian package; see scripts/install-deps for the list.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

pkg_check_modules(IBVERBS REQUIRED IMPORTED_TARGET libibverbs)
pkg_check_modules(RDMACM REQUIRED IMPORTED_TARGET librdmacm)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)
pkg_check_modules(PMIX REQUIRED IMPORTED_TARGET pmix)  # libpmix-dev: launch by srun --mpi=pmix, mpirun
pkg_check_modules(UCX IMPORTED_TARGET ucx)   # optional: the UCX transport and perf baseline
if(NOT UCX_FOUND)
  message(STATUS "UCX not found: UCX baselines are not built")
endif()

if(AUGUR_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(AUGUR_BUILD_PERF)
  find_package(benchmark REQUIRED)
endif()
