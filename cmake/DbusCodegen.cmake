# Generates sdbus-c++ adaptor and proxy headers from one interface XML at
# build time; nothing generated is committed (the XML is the API's source).
find_program(SDBUS_XML2CPP sdbus-c++-xml2cpp REQUIRED)
set(TASKSCOPE_GENERATED_DIR "${CMAKE_BINARY_DIR}/generated")

# taskscope_dbus_codegen(<out-var> <xml> <stem>) appends the two headers
# <stem>_adaptor.h and <stem>_proxy.h to <out-var>.
function(taskscope_dbus_codegen out_var xml stem)
  set(adaptor "${TASKSCOPE_GENERATED_DIR}/dbus/${stem}_adaptor.h")
  set(proxy "${TASKSCOPE_GENERATED_DIR}/dbus/${stem}_proxy.h")
  add_custom_command(
    OUTPUT "${adaptor}" "${proxy}"
    COMMAND ${CMAKE_COMMAND} -E make_directory "${TASKSCOPE_GENERATED_DIR}/dbus"
    COMMAND ${SDBUS_XML2CPP} "${xml}" "--adaptor=${adaptor}" "--proxy=${proxy}"
    DEPENDS "${xml}"
    COMMENT "xml2cpp ${stem}"
    VERBATIM)
  set(${out_var} ${${out_var}} "${adaptor}" "${proxy}" PARENT_SCOPE)
endfunction()
