# libaugur_trace.so, the PMPI interposer, is compiled against one mpi.h: MPI handle types differ
# per implementation (Open MPI pointers, MPICH ints). augur_add_trace_recorder(<target> <mpi
# target>) builds one more, e.g. against augur's own shim once it exists.
function(augur_add_trace_recorder target mpi_target)
  add_library(${target} SHARED ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/augur_trace.c)
  target_link_libraries(${target} PRIVATE ${mpi_target} augur_warnings_c ${CMAKE_DL_LIBS})
  # Preloaded into programs that are not sanitized: it must not need the sanitizer runtime.
  target_compile_options(${target} PRIVATE -fno-sanitize=all)
  target_link_options(${target} PRIVATE -fno-sanitize=all)
endfunction()

find_package(MPI COMPONENTS C)
if(MPI_C_FOUND)
  augur_add_trace_recorder(augur_trace MPI::MPI_C)
else()
  message(STATUS "MPI not found: libaugur_trace for the system's MPI is not built")
endif()
