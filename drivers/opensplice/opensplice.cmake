# The OpenSplice drivers' one build: opensplice (6.9) and opensplice5 (5.5.1, federated)
# are drivers/opensplice's sources on the OpenSplice that build-sdk installed into
# PSB_SDK_PREFIX. Their CMakeLists include this file after drivers/source_sdk.cmake.
set(PSBENCH_OSPL_SOURCES ${CMAKE_CURRENT_LIST_DIR})

# psbench_add_opensplice_driver(NAME LIBRARIES...): the driver NAME (target psbench-NAME)
# linked to LIBRARIES of the SDK's lib/, after psbench_read_sdk(sdk NAME) found the SDK
# (its version, commit and flags go to --describe through the generated sdk_info.h).
function(psbench_add_opensplice_driver name)
  set(OSPL_HOME ${PSB_SDK_PREFIX})
  set(shared ${PSBENCH_OSPL_SOURCES})

  # The types: idl/psbench.idl with OpenSplice's #pragma keylist for the two topic types
  # (keyless: the list is empty), which idlpp needs to generate their type support. The
  # pragma must be in the module's scope, so it goes before the file's last "};".
  file(READ ${PROJECT_SOURCE_DIR}/idl/psbench.idl idl)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/idl/psbench.idl)
  string(REGEX REPLACE "};[ \t\r\n]*$" "  #pragma keylist Bytes\n  #pragma keylist Complex\n};\n"
         ospl_idl "${idl}")
  if(ospl_idl STREQUAL idl)
    message(FATAL_ERROR "idl/psbench.idl does not end with its module's \"};\": "
                        "drivers/opensplice/opensplice.cmake adds its pragmas there")
  endif()
  set(gen ${CMAKE_CURRENT_BINARY_DIR}/idl)
  file(MAKE_DIRECTORY ${gen})
  file(WRITE ${gen}/psbench.idl.new "${ospl_idl}")
  configure_file(${gen}/psbench.idl.new ${gen}/psbench.idl COPYONLY)
  set(generated ${gen}/psbenchSacDcps.c ${gen}/psbenchSplDcps.c)
  add_custom_command(
    OUTPUT ${generated} ${gen}/psbench.h ${gen}/psbenchDcps.h ${gen}/psbenchSacDcps.h
           ${gen}/psbenchSplDcps.h
    COMMAND ${CMAKE_COMMAND} -E env OSPL_HOME=${OSPL_HOME} OSPL_TMPL_PATH=${OSPL_HOME}/etc/idlpp
            PATH=${OSPL_HOME}/bin:$ENV{PATH} ${OSPL_HOME}/bin/idlpp -S -l c -d ${gen} ${gen}/psbench.idl
    COMMAND ${CMAKE_COMMAND} -DFILE=${gen}/psbenchSplDcps.c -P ${shared}/copyin_cache.cmake
    DEPENDS ${gen}/psbench.idl ${OSPL_HOME}/bin/idlpp ${shared}/copyin_cache.cmake
    COMMENT "idlpp -S -l c psbench.idl (OpenSplice's C types)")

  # The SDK's version, commit and build flags for --describe.
  psbench_sdk_header(${gen}/sdk_info.h PSBENCH_OSPL_VERSION "${sdk_VERSION}"
                     PSBENCH_OSPL_COMMIT "${sdk_COMMIT}" PSBENCH_OSPL_FLAGS "${sdk_FLAGS}"
                     PSBENCH_OSPL_HOME "${OSPL_HOME}")

  psbench_add_driver(${name} ${shared}/opensplice_driver.cpp ${generated})
  target_include_directories(psbench-${name} PRIVATE ${gen} ${shared}
    ${OSPL_HOME}/include ${OSPL_HOME}/include/sys ${OSPL_HOME}/include/dcps/C/SAC)
  # The generated C is OpenSplice's: its warnings are not the driver's.
  set_source_files_properties(${generated} PROPERTIES COMPILE_OPTIONS "-w")
  target_link_directories(psbench-${name} PRIVATE ${OSPL_HOME}/lib)
  target_link_libraries(psbench-${name} PRIVATE ${ARGN})
  # Found at run time through the run path: no LD_LIBRARY_PATH.
  set_target_properties(psbench-${name} PROPERTIES BUILD_RPATH ${OSPL_HOME}/lib
                                                   INSTALL_RPATH ${OSPL_HOME}/lib)
endfunction()
