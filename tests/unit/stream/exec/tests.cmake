taskscope_unit_test(stream/exec/test_exec_request.cpp taskscope_stream_exec)
taskscope_unit_test(stream/exec/test_exec_service.cpp taskscope_stream_exec)
taskscope_unit_test(stream/exec/test_exec_records.cpp taskscope_stream_exec)
taskscope_unit_test(stream/exec/test_exec_spawn.cpp taskscope_stream_exec)
# Every exec goes through taskscope-shim --exec: the test runs the built one.
get_property(_exec_test_shim GLOBAL PROPERTY TASKSCOPE_SHIM_PATH)
target_compile_definitions(stream_exec_test_exec_service PRIVATE TASKSCOPE_TEST_SHIM="${_exec_test_shim}")
add_dependencies(stream_exec_test_exec_service taskscope-shim)
