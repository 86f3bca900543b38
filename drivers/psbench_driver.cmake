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

# psbench_add_rust_driver(NAME): a driver written in Rust on core/rust/psbench-driver.
# drivers/<NAME>/Cargo.toml builds a static library ([lib] name = "psbench_<NAME>",
# crate-type = ["staticlib"]) with cargo (release profile, --locked: commit Cargo.lock) in
# PSBENCH_CARGO_TARGET_DIR, outside the checkout, so a clean clone rebuilds incrementally;
# cargo runs again when a .rs, Cargo.toml or Cargo.lock of the driver or the SDK changes.
# The library is then linked as a C++ driver's is: build/drivers/<NAME>/libpsbench-<NAME>.so,
# target psbench-<NAME>, the one drivers/exports.map, so it exports psb_driver_entry and
# nothing else (a cdylib would also export every #[no_mangle] item of every crate, such as
# iceoryx2's logger hook). The conformance suite and psbench_add_driver_test work unchanged.
set(PSBENCH_CARGO_TARGET_DIR "$ENV{HOME}/.cache/psbench/cargo-target" CACHE PATH
    "cargo's target directory for Rust drivers and probes (outside the checkout)")
function(psbench_add_rust_driver name)
  # rustup's cargo is not always on PATH (a non-login shell, CI): look there too.
  find_program(PSBENCH_CARGO cargo HINTS $ENV{HOME}/.cargo/bin)
  if(NOT PSBENCH_CARGO)
    message(FATAL_ERROR "drivers/${name} is written in Rust: install cargo (rustup, or Debian's "
                        "cargo if recent enough for its Cargo.lock), then build it again")
  endif()
  set(folder ${PROJECT_SOURCE_DIR}/drivers/${name})
  set(sdk ${PROJECT_SOURCE_DIR}/core/rust/psbench-driver)
  string(REPLACE "-" "_" lib psbench_${name})
  file(READ ${folder}/Cargo.toml cargo_toml)
  if(NOT cargo_toml MATCHES "\\[lib\\][^[]*name *= *\"${lib}\""
     OR NOT cargo_toml MATCHES "\\[lib\\][^[]*crate-type *= *\\[ *\"staticlib\" *\\]")
    message(FATAL_ERROR "drivers/${name}/Cargo.toml: give [lib] name = \"${lib}\" and "
                        "crate-type = [\"staticlib\"] (psbench links the driver library itself)")
  endif()
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS
    ${folder}/*.rs ${folder}/*Cargo.toml ${folder}/Cargo.lock
    ${sdk}/src/*.rs ${sdk}/Cargo.toml)
  set(archive ${PSBENCH_CARGO_TARGET_DIR}/release/lib${lib}.a)
  set(stamp ${CMAKE_CURRENT_BINARY_DIR}/cargo-build.stamp)
  add_custom_command(OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} -E env CARGO_TARGET_DIR=${PSBENCH_CARGO_TARGET_DIR}
            ${PSBENCH_CARGO} build --release --locked --manifest-path ${folder}/Cargo.toml
    COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
    BYPRODUCTS ${archive}  # so that the link below sees the archive cargo just wrote
    DEPENDS ${sources}
    USES_TERMINAL  # the console pool: one cargo at a time, its progress shown
    COMMENT "cargo build --release drivers/${name}")
  add_custom_target(psbench-${name}-cargo DEPENDS ${stamp})
  # The library's one source declares the entry point the archive defines.
  set(entry ${CMAKE_CURRENT_BINARY_DIR}/psbench-${name}-entry.c)
  file(CONFIGURE OUTPUT ${entry} CONTENT
       "#include \"psbench/driver.h\"\nPSB_DRIVER_EXPORT const psb_driver *psb_driver_entry(void);\n")
  psbench_add_driver(${name} ${entry})
  add_dependencies(psbench-${name} psbench-${name}-cargo)
  # -u pulls psb_driver_entry, and with it what it needs, out of the archive; the rest is
  # Rust's std's own system libraries (rustc --print native-static-libs).
  target_link_options(psbench-${name} PRIVATE -Wl,-u,psb_driver_entry -Wl,--gc-sections)
  target_link_libraries(psbench-${name} PRIVATE ${archive} gcc_s util rt pthread m dl)
  set_property(TARGET psbench-${name} APPEND PROPERTY LINK_DEPENDS ${archive})

  # The SDK's own tests (its ABI layout against driver.h, the table it builds), once.
  get_property(sdk_tested GLOBAL PROPERTY PSBENCH_RUST_SDK_TESTED)
  if(NOT sdk_tested)
    set_property(GLOBAL PROPERTY PSBENCH_RUST_SDK_TESTED TRUE)
    add_test(NAME rust_sdk
      COMMAND ${CMAKE_COMMAND} -E env CARGO_TARGET_DIR=${PSBENCH_CARGO_TARGET_DIR}
              ${PSBENCH_CARGO} test --locked --manifest-path ${sdk}/Cargo.toml)
    set_tests_properties(rust_sdk PROPERTIES TIMEOUT 600)
  endif()
endfunction()
