// CFlowSys: the few system calls and macros that Swift's Glibc import cannot express
// (variadic syscall(2), the _np spawn action, siginfo union fields, wait-status macros)
// plus an async-signal-safe SIGCHLD notifier, which must not be written in Swift.
#ifndef CFLOWSYS_H
#define CFLOWSYS_H

#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
/* Not covered by Swift's Glibc module; re-exported to Swift through this one. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>

/// pidfd_open(2) through syscall(2). Returns the O_CLOEXEC pidfd, or -1 with errno set
/// (ENOSYS on kernels older than 5.3).
int cflow_pidfd_open(pid_t pid);

/// pipe2(fds, O_CLOEXEC) (pipe2 is a _GNU_SOURCE declaration Swift does not see).
int cflow_pipe_cloexec(int fds[2]);

/// Names the calling thread (prctl is variadic). Shows up in `ps -L` and debuggers.
void cflow_set_thread_name(const char *name);

/// posix_spawn_file_actions_addchdir_np (glibc 2.29+). Returns 0 or an error number.
int cflow_spawn_file_actions_addchdir(posix_spawn_file_actions_t *actions, const char *path);

/// posix_spawn_file_actions_addclosefrom_np(actions, from) (glibc 2.34+): close every
/// descriptor >= `from` in the child, including ones flow inherited without O_CLOEXEC.
/// Returns 0, or ENOSYS when the C library lacks it (nothing is added then).
int cflow_spawn_file_actions_addclosefrom(posix_spawn_file_actions_t *actions, int from);

/// posix_spawn_file_actions_addtcsetpgrp_np(actions, fd) (glibc 2.35+): in the child,
/// after it joined its new process group and before exec, make that group the foreground
/// group of terminal `fd`. Returns 0, or ENOSYS when the C library lacks it.
int cflow_spawn_file_actions_addtcsetpgrp(posix_spawn_file_actions_t *actions, int fd);

/// Whether `pid` (our child) has terminated, without reaping it (waitid WNOWAIT).
/// Returns 1 if it has, 0 if it is still running, -1 with errno on error (e.g. ECHILD).
int cflow_child_has_exited(pid_t pid);

/// Decode a waitpid status: 1 and *value = exit code if exited normally, 2 and
/// *value = signal number if killed by a signal, 0 otherwise (stopped/continued).
int cflow_decode_wait_status(int status, int *value);

/// Make SIGCHLD write 1 to `eventfd` (an eventfd, non-blocking). The first call installs
/// a handler (SA_RESTART | SA_NOCLDSTOP) that notifies every registered eventfd (up to 8)
/// and then calls whatever handler was installed before it. Returns 0 or -1 with errno.
int cflow_install_sigchld_notifier(int eventfd);

/// Consume a pending SIGPIPE of the calling thread (which must have it blocked), so a
/// write that failed with EPIPE leaves nothing pending. Never blocks.
void cflow_consume_pending_sigpipe(void);

/// memrchr (a GNU extension the Glibc module does not export): the last `c` in `bytes`.
const void *cflow_memrchr(const void *bytes, int c, size_t count);

#endif
