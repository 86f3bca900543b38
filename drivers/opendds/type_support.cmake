# OpenDDS 3.12's type support for an IDL file, as OpenDDS's own builds make it:
# opendds_idl writes the TypeSupport IDL and its implementation, then tao_idl compiles
# both IDL files to C++ (the classic mapping), without Any or TypeCode (-Sa -St,
# dds_suppress_anys). Used by the driver and by bench/probes/opendds.
#   opendds_type_support(<out-var> IDL <file> GEN <dir> ACE <ace_root> DDS <dds_root>)
# sets <out-var> to the generated .cpp files (their headers are in GEN).
function(opendds_type_support out)
  cmake_parse_arguments(arg "" "IDL;GEN;ACE;DDS" "" ${ARGN})
  get_filename_component(base ${arg_IDL} NAME_WE)
  get_filename_component(idl_dir ${arg_IDL} DIRECTORY)
  set(tao_root ${arg_ACE}/TAO)
  set(gen ${arg_GEN})
  file(MAKE_DIRECTORY ${gen})
  set(tools_env ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${arg_ACE}/lib:${arg_DDS}/lib
                DDS_ROOT=${arg_DDS} ACE_ROOT=${arg_ACE} TAO_ROOT=${tao_root})
  set(tao_idl_flags -Sa -St -Wb,pre_include=ace/pre.h -Wb,post_include=ace/post.h
                    -I${arg_DDS} -I${tao_root} -I${idl_dir} -o ${gen})
  set(generated
    ${gen}/${base}C.cpp ${gen}/${base}S.cpp
    ${gen}/${base}TypeSupportC.cpp ${gen}/${base}TypeSupportS.cpp
    ${gen}/${base}TypeSupportImpl.cpp)
  add_custom_command(
    OUTPUT ${generated} ${gen}/${base}C.h ${gen}/${base}TypeSupportImpl.h
    COMMAND ${tools_env} ${arg_DDS}/bin/opendds_idl -Sa -St -o ${gen} ${arg_IDL}
    COMMAND ${tools_env} ${arg_ACE}/bin/tao_idl ${tao_idl_flags} ${arg_IDL}
    COMMAND ${tools_env} ${arg_ACE}/bin/tao_idl ${tao_idl_flags} ${gen}/${base}TypeSupport.idl
    DEPENDS ${arg_IDL} ${arg_DDS}/bin/opendds_idl
    COMMENT "opendds_idl, tao_idl: type support for ${base}.idl"
    VERBATIM)
  set(${out} ${generated} PARENT_SCOPE)
endfunction()
