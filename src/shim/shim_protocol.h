/*
 * The command line of taskscope-shim, shared by the shim (C) and the
 * manager's launcher (C++): one list of option names, not two hand-kept
 * copies. Only macros, so both languages include it as is.
 *
 * Isolation options (all optional; --root switches isolation on):
 *   --root DIR            the task dir, which becomes the task's "/"
 *   --ro-bind PATH        a host path (chroot_env) bound read-only at the
 *                         same place in the root; missing ones are skipped
 *   --alloc-dir DIR       bound read-write at /alloc
 *   --volume SRC DST OPTS three words: host path, path in the root, and
 *                         "ro"|"rw" "," "private"|"host-to-task"|"bidirectional"
 *   --pid-ns MODE         private (default when isolated) | host
 *   --ipc-ns MODE         private (default when isolated) | host
 *   --caps HEX            capability set (bounding, permitted, effective,
 *                         inheritable and, for a non-root user, ambient)
 *   --no-new-privs 1      PR_SET_NO_NEW_PRIVS before exec
 *   --secrets-size BYTES  size of the secrets/ tmpfs
 *   --secrets-dir DIR     bound read-write at secrets/ instead of the tmpfs
 *                         (a scheduler's own secrets dir, e.g. Nomad's)
 */
#ifndef TASKSCOPE_SHIM_PROTOCOL_H
#define TASKSCOPE_SHIM_PROTOCOL_H

#define SHIM_OPT_ROOT "--root"
#define SHIM_OPT_RO_BIND "--ro-bind"
#define SHIM_OPT_ALLOC_DIR "--alloc-dir"
#define SHIM_OPT_VOLUME "--volume"
#define SHIM_OPT_PID_NS "--pid-ns"
#define SHIM_OPT_IPC_NS "--ipc-ns"
#define SHIM_OPT_CAPS "--caps"
#define SHIM_OPT_NO_NEW_PRIVS "--no-new-privs"
#define SHIM_OPT_SECRETS_SIZE "--secrets-size"
#define SHIM_OPT_SECRETS_DIR "--secrets-dir"

#define SHIM_NS_PRIVATE "private"
#define SHIM_NS_HOST "host"

#define SHIM_VOL_RO "ro"
#define SHIM_VOL_RW "rw"
#define SHIM_PROP_PRIVATE "private"
#define SHIM_PROP_HOST_TO_TASK "host-to-task"
#define SHIM_PROP_BIDIRECTIONAL "bidirectional"

#endif
