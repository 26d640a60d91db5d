# augur_add_gtest(NAME n SOURCES s... [LIBS l...] [LABELS unit|softroce...] [TIMEOUT sec])
# Native unit tests carry the label `unit`; tests that need an RDMA device carry `softroce`
# and run inside scripts/softroce (one guest boot for all of them).
include(GoogleTest)
function(augur_add_gtest)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  augur_target_defaults(${T_NAME})
  # PRE_TEST: list test cases when ctest runs (inside the guest for softroce tests), not at build.
  gtest_discover_tests(${T_NAME} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
endfunction()
