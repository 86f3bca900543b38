# psbench_add_driver(NAME SOURCES...): builds drivers/<NAME> as libpsbench-<NAME>.so
# in build/drivers/<NAME>/, where the node and the Python CLI look for it.
function(psbench_add_driver name)
  add_library(psbench-${name} MODULE ${ARGN})
  target_include_directories(psbench-${name} PRIVATE ${PROJECT_SOURCE_DIR}/core/include)
  set_target_properties(psbench-${name} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME "psbench-${name}"
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/drivers/${name}
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden)
endfunction()
