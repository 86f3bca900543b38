# psbench_add_driver(NAME SOURCES...): builds drivers/<NAME> as libpsbench-<NAME>.so
# in build/drivers/<NAME>/, where the node and the Python CLI look for it. The library
# exports psb_driver_entry and nothing else: hidden visibility for the driver's own code,
# and drivers/exports.map (one version script for every driver) for what static
# libraries and template instances (libstdc++) would otherwise export.
function(psbench_add_driver name)
  set_property(GLOBAL APPEND PROPERTY PSBENCH_DRIVERS ${name})  # for the conformance suite
  add_library(psbench-${name} MODULE ${ARGN})
  target_include_directories(psbench-${name} PRIVATE ${PROJECT_SOURCE_DIR}/core/include)
  set_target_properties(psbench-${name} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME "psbench-${name}"
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/drivers/${name}
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden)
  target_link_options(psbench-${name} PRIVATE
    -Wl,--version-script=${PROJECT_SOURCE_DIR}/drivers/exports.map)
  set_property(TARGET psbench-${name} APPEND PROPERTY
    LINK_DEPENDS ${PROJECT_SOURCE_DIR}/drivers/exports.map)
endfunction()

# psbench_add_driver_test(NAME [OWN_MAIN] SOURCES...): a GoogleTest of drivers/<NAME>
# that loads the built driver through its ABI; the test finds it at PSBENCH_DRIVER_PATH.
# OWN_MAIN: the test defines main() itself (e.g. to run as a child process).
function(psbench_add_driver_test name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "OWN_MAIN" "" "")
  find_package(GTest REQUIRED)
  find_package(Threads REQUIRED)
  include(GoogleTest)
  set(test ${name}_driver_test)
  add_executable(${test} ${arg_UNPARSED_ARGUMENTS})
  target_include_directories(${test} PRIVATE ${PROJECT_SOURCE_DIR}/core/include ${PROJECT_SOURCE_DIR}/drivers)
  target_compile_definitions(${test} PRIVATE PSBENCH_DRIVER_PATH="$<TARGET_FILE:psbench-${name}>")
  if(arg_OWN_MAIN)
    target_link_libraries(${test} PRIVATE GTest::gtest dl Threads::Threads)
  else()
    target_link_libraries(${test} PRIVATE GTest::gtest_main dl Threads::Threads)
  endif()
  add_dependencies(${test} psbench-${name})
  # ctest runs tests side by side (make test: -j2), except those of drivers whose manifest
  # declares a service: a per-host daemon (RouDi) one test starts and stops is seen by
  # another, so they, and the conformance suite, take turns on one lock.
  file(READ ${PROJECT_SOURCE_DIR}/drivers/${name}/manifest.toml manifest)
  set(lock "")
  if(manifest MATCHES "\\[\\[services\\]\\]")
    set(lock RESOURCE_LOCK psbench-services)
  endif()
  gtest_discover_tests(${test} TEST_PREFIX "${name}." PROPERTIES TIMEOUT 120 ${lock})
endfunction()
