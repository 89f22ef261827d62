taskscope_unit_test(manager/test_task_spec.cpp taskscope_manager_lib)
taskscope_unit_test(manager/test_task_record.cpp taskscope_manager_lib)
taskscope_unit_test(manager/test_config.cpp taskscope_manager_lib)
taskscope_unit_test(manager/test_cpu_partitions.cpp taskscope_manager_lib)
taskscope_unit_test(manager/test_spec_redaction.cpp taskscope_manager_lib)
taskscope_unit_test(manager/test_scope_reconciler.cpp taskscope_manager_lib)
# The lifecycle against a fake systemd, with the real shim.
get_property(_taskscope_shim GLOBAL PROPERTY TASKSCOPE_SHIM_PATH)
taskscope_unit_test(manager/test_task_manager.cpp taskscope_manager_lib)
set_tests_properties(unit.manager_test_task_manager PROPERTIES TIMEOUT 120
  ENVIRONMENT "TASKSCOPE_FIXTURES=${PROJECT_SOURCE_DIR}/tests/fixtures;TASKSCOPE_SHIM_PATH=${_taskscope_shim}")
taskscope_unit_test(manager/test_fd_budget.cpp taskscope_manager_lib)
taskscope_unit_test(manager/test_launcher.cpp taskscope_manager_lib)
taskscope_unit_test(manager/test_shim_home.cpp taskscope_manager_lib)
