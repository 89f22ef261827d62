get_property(_taskscope_shim GLOBAL PROPERTY TASKSCOPE_SHIM_PATH)
taskscope_unit_test(manager/tasks/test_scope_reconciler.cpp taskscope_manager_lib)
# The lifecycle against a fake systemd, with the real shim.
taskscope_unit_test(manager/tasks/test_task_registry.cpp taskscope_manager_lib)
set_tests_properties(unit.manager_tasks_test_task_registry PROPERTIES TIMEOUT 120
  ENVIRONMENT "TASKSCOPE_FIXTURES=${PROJECT_SOURCE_DIR}/tests/fixtures;TASKSCOPE_SHIM_PATH=${_taskscope_shim}")
# One start, its steps and every failure path's undo list, with the real shim.
taskscope_unit_test(manager/tasks/test_start_procedure.cpp taskscope_manager_lib)
set_tests_properties(unit.manager_tasks_test_start_procedure PROPERTIES TIMEOUT 120
  ENVIRONMENT "TASKSCOPE_FIXTURES=${PROJECT_SOURCE_DIR}/tests/fixtures;TASKSCOPE_SHIM_PATH=${_taskscope_shim}")
taskscope_unit_test(manager/tasks/test_exit_watch.cpp taskscope_manager_lib)
taskscope_unit_test(manager/tasks/test_stop_procedure.cpp taskscope_manager_lib)
taskscope_unit_test(manager/tasks/test_task_end.cpp taskscope_manager_lib)
taskscope_unit_test(manager/tasks/test_task_holdings.cpp taskscope_manager_lib)
