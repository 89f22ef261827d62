taskscope_unit_test(spec/test_task_spec.cpp taskscope_spec)
taskscope_unit_test(spec/test_plugin_spec.cpp taskscope_spec)
# The views the manager serves (GetTask's) come from the redacted struct.
taskscope_unit_test(spec/test_redaction.cpp taskscope_manager_lib)
taskscope_unit_test(spec/test_id_ranges.cpp taskscope_spec)
taskscope_unit_test(spec/test_task_limits.cpp taskscope_spec)
taskscope_unit_test(spec/test_json_text.cpp taskscope_spec)
