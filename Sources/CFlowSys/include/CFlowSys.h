// CFlowSys: the few system calls and macros that Swift's Glibc import cannot express
// (variadic syscall(2), the _np spawn action, siginfo union fields, wait-status macros)
// plus an async-signal-safe SIGCHLD notifier, which must not be written in Swift.
#ifndef CFLOWSYS_H
#define CFLOWSYS_H

#include <signal.h>
#include <stdint.h>
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

/// Starts flow's process guard (see ProcessGuard.swift) once; returns its pid, or -1 with
/// errno set (ENOSYS on an architecture it does not support).
pid_t cflow_guard_start(void);

/// Puts `group` (0: none) into the guard's list at `slot`.
void cflow_guard_set(int32_t slot, pid_t group);

/// The guard's pid, or -1 when none runs.
pid_t cflow_guard_pid(void);

/// Reaps the guard if it has exited (someone killed it: it ends only with flow) and
/// forgets it; returns 1 then, else 0. Does nothing if no guard runs.
int cflow_guard_reap_if_exited(void);

/// Ends the guard and reaps it: at once with `kill_now`, otherwise by closing its pipe, so
/// that it kills the groups listed first. Does nothing if no guard runs.
void cflow_guard_stop(int kill_now);

/// Names the calling thread (prctl is variadic). Shows up in `ps -L` and debuggers.
void cflow_set_thread_name(const char *name);

/// What `cflow_spawn` starts. Descriptors of -1 are inherited from flow unchanged.
struct cflow_spawn_request {
    /// The executable's path (already resolved through PATH), argv and envp (NULL-ended).
    const char *path;
    char *const *argv;
    char *const *envp;
    /// Become the child's 0, 1 and 2 (dup2; the originals should be close-on-exec).
    int stdin_fd;
    int stdout_fd;
    int stderr_fd;
    /// Working directory of the child, or NULL for flow's.
    const char *directory;
    /// A terminal whose foreground the child takes after joining its new process group
    /// and before exec, or -1.
    int tty_fd;
    /// If not 0: flow's pid. The child is SIGKILLed when the calling thread dies (Linux's
    /// parent-death signal; also if flow is already gone when the child checks). Only for
    /// a caller thread that lives as long as flow: the signal follows the thread, not the
    /// process.
    pid_t die_with_parent;
    /// If not 0: ask clone for a pidfd of the child (CLONE_PIDFD, close-on-exec), so that
    /// running out of descriptors fails the spawn before anything starts.
    int want_pidfd;
    /// If not 0 (and `cflow_spawn_prepare` succeeded): the child shares flow's descriptor
    /// table until it has copied only the first few descriptors (CLONE_FILES, then
    /// close_range with CLOSE_RANGE_UNSHARE), instead of clone copying the whole table.
    /// Worth it when flow holds many descriptors (the pipes and pidfds of many running
    /// children); it costs five dup3 calls, so not otherwise.
    int share_table;
    /// If ≥ 0: the guard slot (`cflow_guard_set`) the child lists its own new process group
    /// in, before it execs. Listed by the parent after the spawn, a flow SIGKILLed in
    /// between (its spawning thread preempted for a few ms while the step's shell started
    /// a background job) left that job running: the guard did not know the group.
    int32_t guard_slot;
};

/// Opens the descriptors `share_table` spawns pass the child's stdio through (3 slots and
/// /dev/null, at low numbers: call it early). Returns 0, or -1 (then `share_table` is
/// ignored).
int cflow_spawn_prepare(void);

/// Starts `request->path` as the leader of a new process group, with default signal
/// dispositions, an empty signal mask, only descriptors 0-2 open (every other one is
/// closed, even without close-on-exec) and the given stdio, directory and terminal.
///
/// Returns 0 and the pid once the child has exec'd; otherwise an errno value (from the
/// child's chdir or execve, or from clone) and no child is left behind.
///
/// Why not posix_spawn: glibc's runs 64 sigaction calls in every child, maps and unmaps a
/// fresh stack (whose pages then fault in) and calls getrlimit once per file action:
/// about 40 µs of each spawn on the 2-core VM, on the critical path of every sequential
/// step. This is the same vfork-style clone and exec, doing only what flow needs.
///
/// With `want_pidfd`, `*pidfd` is the child's pidfd, or -1 if the kernel ignored the flag
/// (before 5.2): then open one with `cflow_pidfd_open`.
int cflow_spawn(const struct cflow_spawn_request *request, pid_t *pid, int *pidfd);

/// Tells the spawner the open-files limit (RLIMIT_NOFILE) flow was started with, before flow
/// raises its own: children get it back before exec, so that a step meets the limit its
/// user set, not flow's raise (a program that closes every descriptor up to the limit, or
/// uses select(), slows down or breaks under a limit of a million).
void cflow_restore_open_file_limit_in_children(unsigned long long soft, unsigned long long hard);

/// Tells the spawner that flow changed the disposition of `sig` (ignored or handled it):
/// children then set it back to the default before exec. Dispositions already
/// non-default when flow first spawns are found by themselves.
void cflow_reset_in_children(int sig);

/// Whether `pid` (our child) has terminated, without reaping it (waitid WNOWAIT).
/// Returns 1 if it has, 0 if it is still running, -1 with errno on error (e.g. ECHILD).
int cflow_child_has_exited(pid_t pid);

/// The pid of one child that has exited and is not reaped yet (which one is the kernel's
/// choice), 0 if none, -1 with errno (ECHILD: no children at all). Reaps nothing.
pid_t cflow_some_exited_child(void);

/// Whether processes orphaned anywhere below flow become flow's children: flow is pid 1
/// (a container's init) or a child subreaper.
int cflow_reaps_orphans(void);

/// Decode a waitpid status: 1 and *value = exit code if exited normally, 2 and
/// *value = signal number if killed by a signal, 0 otherwise (stopped/continued).
int cflow_decode_wait_status(int status, int *value);

/// Make SIGCHLD write 1 to `eventfd` (an eventfd, non-blocking). The first call installs
/// a handler (SA_RESTART | SA_NOCLDSTOP) that notifies every registered eventfd (up to 8)
/// and then calls whatever handler was installed before it. Returns 0 or -1 with errno.
int cflow_install_sigchld_notifier(int eventfd);

/// Make the SIGCHLD notifier (installed for `eventfd` if it is not yet) also run when a
/// child stops, not only when one exits. Returns 0 or -1 with errno.
int cflow_report_child_stops(int eventfd);

/// Whether `pid` (our child) has stopped since the last call: consumes that report
/// (waitid WSTOPPED | WNOHANG); never reaps.
int cflow_child_stopped(pid_t pid);

/// Handle `sig` by writing its number, one byte, to `pipe_fd` (non-blocking; every signal
/// forwarded by this call shares the one pipe). The handler is in place when this returns,
/// so no signal is lost to a registration still under way. Returns 0 or -1 with errno.
int cflow_forward_signal(int sig, int pipe_fd);

/// Takes a signal of those `cflow_forward_signal` handles that is pending for the process
/// but not delivered yet (no thread has run its handler): it is blocked in the calling
/// thread for a moment and taken with `sigtimedwait`, lowest number first. Returns it, or 0.
/// Why: a signal goes to a thread that must be scheduled to run the handler; under load
/// a run could end meanwhile as if it had never come (`SignalTrap`).
int cflow_take_undelivered_signal(void);

/// Handle `sig` by exiting at once with 128 + `sig` (_exit: no atexit handlers, no core
/// file). Returns 0 or -1 with errno.
int cflow_exit_on_signal(int sig);

/// Handle SIGTSTP (Ctrl-Z) by noting the request and writing 1 to `eventfd`; children
/// get SIGTSTP back at its default. Returns 0 or -1 with errno.
int cflow_install_suspend_notifier(int eventfd);

/// Whether a SIGTSTP came since the last call (and forget it).
int cflow_take_suspend_request(void);

/// Stop flow (the whole process) with SIGTSTP, as its default action would; returns once
/// it is continued (SIGCONT).
void cflow_stop_self(void);

/// Consume a pending SIGPIPE of the calling thread (which must have it blocked), so a
/// write that failed with EPIPE leaves nothing pending. Never blocks.
void cflow_consume_pending_sigpipe(void);

/// memrchr (a GNU extension the Glibc module does not export): the last `c` in `bytes`.
const void *cflow_memrchr(const void *bytes, int c, size_t count);

/// The program's `argc`, as the C runtime passed it to `main` (0 where it is not known).
///
/// Why not Swift's `CommandLine`: on Linux the Swift runtime reads the arguments from
/// `/proc/self/cmdline`, so where `/proc` is not mounted (a chroot, a bubblewrap sandbox
/// without `--proc`) it sees none, and flow died on a range check. glibc hands
/// `argc` and `argv` to every `.init_array` constructor, which keeps them here.
int cflow_argc(void);

/// The program's `argv` (`cflow_argc()` entries, then NULL), or NULL where it is not known.
char *const *cflow_argv(void);

/// Makes the stack of threads created from now on (the Swift runtime's pool among them) at
/// least `minimum` bytes, where glibc's default (RLIMIT_STACK at start, 2 MiB when that is
/// unlimited) is smaller. Returns the default now in force, or 0 if it cannot be read.
///
/// Why: the parser and validator recurse once per level of a workflow's nesting, on a
/// thread of the pool; under `ulimit -s 1024` a workflow within the documented 200 levels
/// overflowed it (SIGSEGV). A thread's stack is mapped by glibc, not bounded by the limit,
/// and steps do not inherit it (unlike RLIMIT_STACK, which flow leaves as it found it).
size_t cflow_ensure_thread_stack(size_t minimum);

/// Keeps every thread made from now on on glibc's main malloc arena (`mallopt(M_ARENA_MAX,
/// 1)`): for a command that only reads and prints, whose work runs on a thread of the pool
/// (see `main.swift`). 0 on success.
int cflow_malloc_one_arena(void);

/// Parks the calling thread (flow's main thread, once the command runs on a task) for
/// good, in `sigsuspend` with no signal blocked, as libdispatch's `dispatch_main` leaves it:
/// the main thread stays the one that takes process-directed signals. Never returns.
///
/// Why not `dispatch_main` (what an `async` main ends in): it parks the thread through
/// `pthread_exit`, which first loads libgcc_s with `dlopen` and force-unwinds the main
/// thread's stack (about 80,000 instructions, a dozen system calls and 20 page faults, at
/// every start of every command, beside the command's first steps). Without it a one-step
/// `flow run` took 3–11% less time, `--no-journal` 13–16% and `flow validate` 14–21%
/// (paired medians; bench/results-2026-11-27.md).
_Noreturn void cflow_park_main_thread(void);

/// Whether libdispatch can watch its worker pool: it reads `/proc/TID/stat` of each worker
/// every second while work waits, and crashes the process (SIGILL, "workq: registered
/// worker exited prematurely") when the file cannot be opened: without `/proc` (a chroot,
/// bubblewrap without `--proc`) or with another PID namespace's.
int cflow_pool_can_watch_workers(void);

/// Sends Swift concurrency's global jobs (and its timed ones: `Task.sleep`) to
/// libdispatch's overcommit pool, whose workers it does not watch, through the runtime's
/// enqueue hooks (as swift-nio installs its event loops as the global executor). For a
/// process where `cflow_pool_can_watch_workers` is false: there, the default pool made
/// about one `flow run` in five die of SIGILL at random. Call before the first task.
void cflow_keep_jobs_off_watched_pool(void);

/// A new temporary file made from `template` (mkostemp, O_CLOEXEC) and unlinked at once:
/// the descriptor, or -1 with errno set. Nothing is left behind however the process ends.
int cflow_anonymous_temp_file(char *template_path);

/// fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE): gives back the disk space of a
/// stretch of a file. -1 with errno set where the file system cannot (EOPNOTSUPP).
int cflow_punch_hole(int fd, int64_t offset, int64_t length);

#endif
