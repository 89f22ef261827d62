# The test bed's decisions (KVM probe, fallback, failure reasons) with a
# stand-in qemu: nothing boots. Included from tests/unit/CMakeLists.txt.
add_test(NAME unit.testbed_run
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_testbed_run.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(unit.testbed_run PROPERTIES LABELS unit TIMEOUT 120)
