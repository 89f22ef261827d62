/*
 * How the task ended, on disk for the manager (keys in shim_protocol.h):
 * the exit file, replaced atomically and durably, or for a start that was
 * aborted before the task ran, the aborted mark beside it.
 */
#ifndef TASKSCOPE_SHIM_EXIT_FILE_H
#define TASKSCOPE_SHIM_EXIT_FILE_H

/* Writes the exit file at path (our own argv string, cut at its last slash
 * for a moment). 0, or -1 with errno. */
int write_exit_file(char *path, int status, int have_status, int oom_killed, int exec_err,
                    const char *exec_step);

/* "<exit file>.aborted" holding our pid; best effort. */
void write_aborted_mark(const char *exit_file);

#endif
