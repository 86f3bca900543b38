# What the probes share among themselves (never with psbench's node, SDK or drivers): the
# headers of this directory, and the CMake of a probe whose vendor library pkg-config finds.
# A probe's CMakeLists includes this file, then calls these.
set(PROBE_COMMON_DIR ${CMAKE_CURRENT_LIST_DIR})

# The probe's headers from this directory: <rtt.hpp>, <usage_span.hpp>, <ping_pong.hpp>.
function(probe_use_common target)
  target_include_directories(${target} PRIVATE ${PROBE_COMMON_DIR})
endfunction()

# The executable NAME from probe.cpp, linked to the pkg-config MODULE; without it, the
# build fails naming LIBRARY and the Debian PACKAGE that brings it (bench/truth shows
# that line as the reason the probe is skipped).
function(probe_from_pkg_config name module library package)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(PROBE_DEP QUIET IMPORTED_TARGET ${module})
  endif()
  if(NOT PROBE_DEP_FOUND)
    message(FATAL_ERROR "${name}: ${library} not found (Debian package ${package})")
  endif()
  add_executable(${name} probe.cpp)
  set_target_properties(${name} PROPERTIES CXX_STANDARD 17)
  target_compile_options(${name} PRIVATE -O2)
  target_link_libraries(${name} PRIVATE PkgConfig::PROBE_DEP)
  probe_use_common(${name})
endfunction()

# The prefix of the SDK `make driver-DRIVER` built from source (scripts/build-source
# DRIVER --prefix) into VAR; without it, the build fails saying so and how to build it.
function(probe_built_sdk var driver what)
  get_filename_component(repo ${PROBE_COMMON_DIR}/../../.. ABSOLUTE)
  execute_process(COMMAND python3 ${repo}/scripts/build-source ${driver} --prefix
                  OUTPUT_VARIABLE prefix OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT EXISTS "${prefix}/psbench-sdk.json")
    message(FATAL_ERROR "${PROJECT_NAME}: ${what} is not built from source yet: make driver-${driver}")
  endif()
  set(${var} ${prefix} PARENT_SCOPE)
endfunction()

# find_package(PACKAGE), or the build fails with `missing`: what is not found and the
# Debian packages that bring it (a macro: the package's variables and functions stay).
macro(probe_find_package package missing)
  find_package(${package} QUIET)
  if(NOT ${package}_FOUND)
    message(FATAL_ERROR "${PROJECT_NAME}: ${missing}")
  endif()
endmacro()
