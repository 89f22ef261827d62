# Protocol test of taskscope-shim, driven from bash like the manager drives
# it; no privileges, no systemd. Included from tests/unit/CMakeLists.txt.
get_property(_taskscope_shim GLOBAL PROPERTY TASKSCOPE_SHIM_PATH)
if(NOT _taskscope_shim)
  message(FATAL_ERROR "TASKSCOPE_SHIM_PATH not set: src/shim must be added before tests/")
endif()
add_test(NAME unit.shim
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_shim.sh ${_taskscope_shim})
set_tests_properties(unit.shim PROPERTIES LABELS unit TIMEOUT 60)
