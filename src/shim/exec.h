/* taskscope-shim --exec (exec.c; protocol in shim_protocol.h). */
#ifndef TASKSCOPE_SHIM_EXEC_H
#define TASKSCOPE_SHIM_EXEC_H

int shim_exec_main(int argc, char **argv, char **envp);

#endif
