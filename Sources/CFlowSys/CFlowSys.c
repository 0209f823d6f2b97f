#define _GNU_SOURCE
#include "CFlowSys.h"
#include "unintercepted.h"

#include <errno.h>
#include <linux/close_range.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <malloc.h>
#include <stdlib.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434 /* same number on every architecture */
#endif

#if CFLOW_TSAN
struct cflow_libc cflow_libc;

__attribute__((constructor)) static void cflow_find_libc(void) {
    cflow_libc.clone = dlsym(RTLD_NEXT, "clone");
    cflow_libc.sigaction = dlsym(RTLD_NEXT, "sigaction");
    cflow_libc.sigprocmask = dlsym(RTLD_NEXT, "sigprocmask");
    cflow_libc.sigpending = dlsym(RTLD_NEXT, "sigpending");
    cflow_libc.dup2 = dlsym(RTLD_NEXT, "dup2");
    cflow_libc.prctl = dlsym(RTLD_NEXT, "prctl");
    cflow_libc._exit = dlsym(RTLD_NEXT, "_exit");
    if (!cflow_libc.clone || !cflow_libc.sigaction || !cflow_libc.sigprocmask || !cflow_libc.sigpending ||
        !cflow_libc.dup2 || !cflow_libc.prctl || !cflow_libc._exit) abort();
}
#endif

int cflow_pidfd_open(pid_t pid) {
    /* pidfd_open always returns a close-on-exec descriptor. */
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

int cflow_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

void cflow_set_thread_name(const char *name) {
    prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

/* The signals a child must set back to the default: every one whose disposition is not
   the default when flow first spawns (its own SIGPIPE and cancellation signals ignored, a
   crash handler of the runtime, SIGHUP ignored by nohup), and every one flow changes later
   (`cflow_reset_in_children`, and the SIGCHLD notifier). Only those: a sigaction costs
   ~3 µs in the child, on the critical path of every sequential step while the parent
   waits. A disposition set later by code other than flow's is left to exec, which resets
   handlers itself (only a signal arriving between the child's unblocking and its exec
   would be handled there); an ignored one would then stay ignored in the steps. Bit n is
   signal n (1-31). */
static uint32_t reset_mask = 0; /* read and written with __atomic builtins */
static pthread_once_t reset_signals_once = PTHREAD_ONCE_INIT;

static void find_reset_signals(void) {
    uint32_t mask = 0;
    for (int sig = 1; sig < 32; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP) continue;
        struct sigaction current;
        if (sigaction(sig, NULL, &current) != 0 || current.sa_handler != SIG_DFL) mask |= 1u << sig;
    }
    __atomic_fetch_or(&reset_mask, mask, __ATOMIC_SEQ_CST);
}

/* The open-files limit flow was started with, for its children (see the header). */
static struct rlimit child_open_files;
static int child_open_files_set = 0; /* read and written with __atomic builtins */

void cflow_restore_open_file_limit_in_children(unsigned long long soft, unsigned long long hard) {
    child_open_files.rlim_cur = (rlim_t)soft;
    child_open_files.rlim_max = (rlim_t)hard;
    __atomic_store_n(&child_open_files_set, 1, __ATOMIC_RELEASE);
}

void cflow_reset_in_children(int sig) {
    if (sig > 0 && sig < 32) __atomic_fetch_or(&reset_mask, 1u << sig, __ATOMIC_SEQ_CST);
}

/* A Ctrl-Z flow must act on (`cflow_install_suspend_notifier`), and the loop's eventfd.
   Both are set and read with __atomic builtins: the handler runs on whichever thread the
   signal lands, and the loop reads the request on its own (a volatile flag was a data race,
   reported by ThreadSanitizer in the job-control tests). */
static volatile sig_atomic_t suspend_requested = 0;
static int suspend_eventfd = -1;

/* An interactive child's SIGTSTP between its taking the terminal and its exec: the user's
   Ctrl-Z, but the default action would stop the child before its exec, with flow's thread
   waiting for that exec (CLONE_VFORK) and flow itself running on, never stopped: the run
   hung for good, Ctrl-C included (a stopped process does not act on it). Handled here
   instead, it asks flow to stop the job (`cflow_spawn` wakes the loop once the child has
   exec'd, which resets the handler). It only stores to flow's memory, which this child
   shares. A stray SIGTTIN/SIGTTOU there is dropped (the child has the foreground). */
CFLOW_CLONE_CODE static void stop_before_exec(int sig) {
    if (sig == SIGTSTP) __atomic_store_n(&suspend_requested, 1, __ATOMIC_RELAXED);
}

/* Runs in the child (cloned with CLONE_VM | CLONE_VFORK), in the parent's memory, with every signal blocked:
   only raw system calls, no allocation, no return. Reports a failure's errno through
   `*error` (shared memory) and exits 127. */
CFLOW_CLONE_CODE static void spawn_child(const struct cflow_spawn_request *r, int unshare_from, volatile int *error) {
    if (unshare_from > 0) {
        /* Sharing flow's table (CLONE_FILES): take a private copy of descriptors below
           `unshare_from` only (the slots holding this child's stdio among them) before
           touching anything. Before 5.9 there is no close_range: copy the whole table. */
        if (syscall(SYS_close_range, (unsigned)unshare_from, ~0U, CLOSE_RANGE_UNSHARE) != 0 &&
            unshare(CLONE_FILES) != 0) goto fail;
    }
    if (r->die_with_parent != 0) {
        /* A SIGKILLed flow cannot pass anything on: the kernel kills the step for it. If
           flow died before this line, the child was already handed to another parent. */
        if (UNINTERCEPTED(prctl)(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) goto fail;
        if (getppid() != r->die_with_parent) UNINTERCEPTED(_exit)(127);
    }
    if (setpgid(0, 0) != 0) goto fail;
    /* Until the line above this child was in flow's process group: a terminal's Ctrl-C (or
       any signal to that group) that came meanwhile is pending here, blocked, and would
       kill the step as soon as it unblocks, although the signal was flow's alone to take
       (it passes the first one on to the steps it stops, and never to `finally` or undo
       steps). Nothing else can have signalled this child yet: flow learns its pid only
       after its exec. Setting a pending signal to SIG_IGN discards it; the loop below
       puts it back to its default. One sigpending when nothing is pending.
       A Ctrl-Z (SIGTSTP, or a stray TTIN/TTOU to the group) is discarded too, for a
       harder reason: it would stop this child before its exec, and flow's spawning thread
       waits for that exec (CLONE_VFORK), so flow could neither stop itself nor continue
       the child: the run hung for good (found by pressing Ctrl-Z and `fg` in a loop during
       a run of short steps). Flow passes its Ctrl-Z on to every step it has registered;
       a step's spawn runs on the loop's thread, which reads the request only after the
       spawn ended, so this child is among them. */
    uint32_t discarded = 0;
    sigset_t pending;
    if (UNINTERCEPTED(sigpending)(&pending) == 0) {
        static const int stray[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU};
        struct sigaction ign;
        memset(&ign, 0, sizeof ign);
        ign.sa_handler = SIG_IGN;
        for (unsigned i = 0; i < sizeof stray / sizeof stray[0]; i++) {
            if (sigismember(&pending, stray[i]) != 1) continue;
            (void)UNINTERCEPTED(sigaction)(stray[i], &ign, NULL);
            discarded |= 1u << stray[i];
        }
    }
    /* Listed with the guard before anything of the step runs (atomic stores into flow's
       memory, which this child shares until its exec). */
    if (r->guard_slot >= 0) cflow_guard_set(r->guard_slot, getpid());
    /* Signals are blocked, so this background group's tcsetpgrp raises no SIGTTOU. */
    if (r->tty_fd >= 0) (void)tcsetpgrp(r->tty_fd, getpid());
    const int from[3] = {r->stdin_fd, r->stdout_fd, r->stderr_fd};
    for (int target = 0; target < 3; target++) {
        int fd = from[target];
        if (fd < 0) continue;
        if (fd == target) {
            /* dup2(fd, fd) would keep close-on-exec: clear it instead. */
            if (fcntl(fd, F_SETFD, 0) != 0) goto fail;
        } else if (UNINTERCEPTED(dup2)(fd, target) != target) {
            goto fail;
        }
    }
    if (r->directory && chdir(r->directory) != 0) goto fail;
    /* Descriptors flow inherited without close-on-exec (a test runner's, a jobserver's)
       must not reach a step. Marked close-on-exec rather than closed here: exec closes them
       after it has released the waiting parent, so with 1,000 children running (3,000
       descriptors: their pipes and pidfds, which every child's copy of the table holds)
       the closing no longer holds up the next spawn (measured: it was a fifth of the
       spawning thread's time). Kernels before 5.11 lack the flag: closed here, as before;
       before 5.9 there is no close_range, and those descriptors are left to their owners'
       flags. */
    if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0) (void)syscall(SYS_close_range, 3U, ~0U, 0U);
    /* Handlers would run here, in flow's memory: back to default before unblocking. Ignored
       signals would stay ignored across exec (a flow started by nohup would pass SIGHUP
       ignored to its steps): default too. Only the signals of `reset_mask`: the others
       are already at their default (a sigaction each costs ~3 µs here, on the critical path
       of every sequential step, while the parent waits). Real-time signals are left alone:
       flow neither handles nor ignores them, and glibc's internal ones only go to flow's
       threads. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    uint32_t mask = __atomic_load_n(&reset_mask, __ATOMIC_RELAXED) | discarded;
    for (int sig = 1; sig < 32; sig++) {
        if (mask & (1u << sig)) (void)UNINTERCEPTED(sigaction)(sig, &dfl, NULL);
    }
    /* From its tcsetpgrp on, an interactive child is the terminal's foreground: a Ctrl-Z
       typed now is its, and would stop it here, before its exec (see stop_before_exec;
       found by a randomized job-control audit: Ctrl-Z and `fg` during short interactive
       steps). Handled until exec, which sets caught signals back to their default. */
    if (r->tty_fd >= 0) {
        struct sigaction stop;
        memset(&stop, 0, sizeof stop);
        stop.sa_handler = stop_before_exec;
        sigfillset(&stop.sa_mask);
        (void)UNINTERCEPTED(sigaction)(SIGTSTP, &stop, NULL);
        (void)UNINTERCEPTED(sigaction)(SIGTTIN, &stop, NULL);
        (void)UNINTERCEPTED(sigaction)(SIGTTOU, &stop, NULL);
    }
    /* The open-files limit flow raised for itself goes back to what the user set: a step's
       program that walks every descriptor up to the limit, or uses select(), must not meet
       flow's raise (Go restores it in its children too). Only when flow raised it. */
    if (__atomic_load_n(&child_open_files_set, __ATOMIC_ACQUIRE)) (void)setrlimit(RLIMIT_NOFILE, &child_open_files);
    sigset_t none;
    sigemptyset(&none);
    (void)UNINTERCEPTED(sigprocmask)(SIG_SETMASK, &none, NULL);
    execve(r->path, r->argv, r->envp);
fail:
    *error = errno ? errno : EINVAL;
    UNINTERCEPTED(_exit)(127);
}

struct spawn_args {
    const struct cflow_spawn_request *request;
    int unshare_from;
    volatile int error;
};

CFLOW_CLONE_CODE static int spawn_entry(void *argument) {
    struct spawn_args *args = argument;
    spawn_child(args->request, args->unshare_from, &args->error);
    return 127;
}

/* The slots of `share_table` spawns: a child sharing flow's table finds its stdio there,
   below `slot_end`, so that its private copy holds only the first few descriptors. One
   spawn at a time uses them (`slot_lock`); between spawns they hold /dev/null, so that
   no pipe end stays open in flow through them. */
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t slots_once = PTHREAD_ONCE_INIT;
static int slots[3] = {-1, -1, -1};
static int slot_null = -1;
static int slot_end = 0;

static void open_slots(void) {
    int fds[4];
    for (int i = 0; i < 4; i++) {
        fds[i] = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (fds[i] < 0) {
            for (int j = 0; j < i; j++) close(fds[j]);
            return;
        }
    }
    int end = 0;
    for (int i = 0; i < 4; i++) if (fds[i] + 1 > end) end = fds[i] + 1;
    slots[0] = fds[0]; slots[1] = fds[1]; slots[2] = fds[2];
    slot_null = fds[3];
    slot_end = end;
}

int cflow_spawn_prepare(void) {
    pthread_once(&slots_once, open_slots);
    return slot_end > 0 ? 0 : -1;
}

int cflow_spawn(const struct cflow_spawn_request *request, pid_t *pid, int *pidfd) {
    pthread_once(&reset_signals_once, find_reset_signals);
    sigset_t all, previous;
    sigfillset(&all);
    /* Blocked across the clone so that no handler of flow's runs in the child. */
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    struct cflow_spawn_request local = *request;
    const int source[3] = {request->stdin_fd, request->stdout_fd, request->stderr_fd};
    if (request->share_table) pthread_once(&slots_once, open_slots);
    /* Not with a terminal to take: the child's private copy keeps only the descriptors
       below `slot_end`, and the terminal's (opened after the slots) is not among them, so
       its tcsetpgrp failed (EBADF) and the step started in the background. */
    const int shared = request->share_table && slot_end > 0 && request->tty_fd < 0;
    if (shared) {
        pthread_mutex_lock(&slot_lock);
        int *target[3] = {&local.stdin_fd, &local.stdout_fd, &local.stderr_fd};
        for (int i = 0; i < 3; i++) {
            if (source[i] < 0) continue;
            if (dup3(source[i], slots[i], O_CLOEXEC) < 0) {
                int failed = errno;
                for (int j = 0; j < i; j++) (void)dup3(slot_null, slots[j], O_CLOEXEC);
                pthread_mutex_unlock(&slot_lock);
                pthread_sigmask(SIG_SETMASK, &previous, NULL);
                return failed;
            }
            *target[i] = slots[i];
        }
    }
    struct spawn_args args = {&local, shared ? slot_end : 0, 0};
    /* The child's stack: part of this frame, unused by us while CLONE_VFORK holds us until
       the child has exec'd or exited. Already-touched stack pages: no faults per spawn. */
    _Alignas(16) char stack[32 * 1024];
    /* CLONE_PIDFD: the pidfd comes with the child, so a lack of descriptors fails here,
       before anything started, and there is no pidfd_open to make afterwards. A kernel
       before 5.2 ignores the flag and leaves -1. */
    int flags = CLONE_VM | CLONE_VFORK | SIGCHLD;
    int fd = -1;
    if (request->want_pidfd) flags |= CLONE_PIDFD;
    if (shared) flags |= CLONE_FILES;
    pid_t child = UNINTERCEPTED(clone)(spawn_entry, stack + sizeof stack, flags, &args, &fd, NULL, NULL);
    int saved = errno;
    if (shared) {
        /* The child has its own copies (or has gone): the slots let go of its stdio. */
        for (int i = 0; i < 3; i++) if (source[i] >= 0) (void)dup3(slot_null, slots[i], O_CLOEXEC);
        pthread_mutex_unlock(&slot_lock);
    }
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    /* A Ctrl-Z the child took before its exec (stop_before_exec): wake the loop, which
       stops the job with this child in it once it is registered. */
    const int suspend_fd = __atomic_load_n(&suspend_eventfd, __ATOMIC_ACQUIRE);
    if (request->tty_fd >= 0 && __atomic_load_n(&suspend_requested, __ATOMIC_RELAXED) && suspend_fd >= 0) {
        uint64_t one = 1;
        ssize_t ignored = write(suspend_fd, &one, sizeof one);
        (void)ignored;
    }
    if (child < 0) return saved;
    if (args.error != 0) {
        /* The child failed before or at exec and has exited: reap it, after taking its
           group off the guard's list (it listed itself before its exec): once reaped, its
           id may be given to another process, and a flow killed before the caller's
           release would have had the guard SIGKILL that process's group. */
        if (request->guard_slot >= 0) cflow_guard_set(request->guard_slot, 0);
        if (fd >= 0) close(fd);
        int status;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
        return args.error;
    }
    *pid = child;
    if (pidfd) *pidfd = fd;
    return 0;
}

int cflow_child_has_exited(pid_t pid) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0) return -1;
    return info.si_pid != 0 ? 1 : 0;
}

pid_t cflow_some_exited_child(void) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0) return -1;
    return info.si_pid;
}

static int saved_argc = 0;
static char *const *saved_argv = NULL;

#ifdef __GLIBC__
/* glibc calls constructors with (argc, argv, envp); other C libraries (musl) pass nothing,
   so there the arguments stay unknown and Swift's `CommandLine` is the only source. */
__attribute__((constructor)) static void cflow_save_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    if (argc > 0 && argv != NULL) {
        saved_argc = argc;
        saved_argv = argv;
    }
}
#endif

int cflow_argc(void) { return saved_argc; }

char *const *cflow_argv(void) { return saved_argv; }

int cflow_reaps_orphans(void) {
    int subreaper = 0;
    if (getpid() == 1) return 1;
    return prctl(PR_GET_CHILD_SUBREAPER, (unsigned long)&subreaper, 0, 0, 0) == 0 && subreaper != 0;
}

int cflow_decode_wait_status(int status, int *value) {
    if (WIFEXITED(status)) { *value = WEXITSTATUS(status); return 1; }
    if (WIFSIGNALED(status)) { *value = WTERMSIG(status); return 2; }
    *value = 0;
    return 0;
}

/* Up to 8 eventfds (one per fallback hub; normally zero or one). The count is published
   after the slot is written, so the handler never reads an unset slot: stored with release
   and loaded with acquire, as the handler may run on another thread than the one that
   installs (a volatile read was a data race, reported by ThreadSanitizer with flow as
   pid 1; its acquire also orders the handler after `previous_action`). */
#define CFLOW_MAX_NOTIFIERS 8
static int notifier_fds[CFLOW_MAX_NOTIFIERS];
static volatile sig_atomic_t notifier_count = 0;
static struct sigaction previous_action;

static void sigchld_notifier(int sig, siginfo_t *info, void *context) {
    int saved = errno; /* a handler must not clobber the interrupted code's errno */
    uint64_t one = 1;
    int count = __atomic_load_n(&notifier_count, __ATOMIC_ACQUIRE);
    for (int i = 0; i < count; i++) {
        ssize_t ignored = write(notifier_fds[i], &one, sizeof one);
        (void)ignored;
    }
    /* Chain to whatever was installed before, so we never steal SIGCHLD from it. */
    if (previous_action.sa_flags & SA_SIGINFO) {
        if (previous_action.sa_sigaction) previous_action.sa_sigaction(sig, info, context);
    } else if (previous_action.sa_handler != SIG_DFL && previous_action.sa_handler != SIG_IGN) {
        previous_action.sa_handler(sig);
    }
    errno = saved;
}

int cflow_install_sigchld_notifier(int eventfd) {
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    int result = 0;
    pthread_mutex_lock(&lock);
    if (notifier_count >= CFLOW_MAX_NOTIFIERS) {
        errno = ENOSPC;
        result = -1;
    } else {
        notifier_fds[notifier_count] = eventfd;
        cflow_reset_in_children(SIGCHLD);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (notifier_count == 0) {
            struct sigaction action;
            memset(&action, 0, sizeof action);
            action.sa_sigaction = sigchld_notifier;
            action.sa_flags = SA_SIGINFO | SA_RESTART | SA_NOCLDSTOP;
            sigemptyset(&action.sa_mask);
            /* Read the old action first, then install: the handler may run as soon as it
               is installed and must find previous_action complete. */
            if (sigaction(SIGCHLD, NULL, &previous_action) != 0 ||
                sigaction(SIGCHLD, &action, NULL) != 0) result = -1;
        }
        if (result == 0) __atomic_store_n(&notifier_count, notifier_count + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
    return result;
}

int cflow_report_child_stops(int eventfd) {
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    int registered = 0;
    for (int i = 0; i < notifier_count; i++) if (notifier_fds[i] == eventfd) registered = 1;
    int result = registered ? 0 : cflow_install_sigchld_notifier(eventfd);
    if (result == 0) {
        /* The same handler, now also called when a child stops (no SA_NOCLDSTOP). */
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_sigaction = sigchld_notifier;
        action.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&action.sa_mask);
        result = sigaction(SIGCHLD, &action, NULL);
    }
    pthread_mutex_unlock(&lock);
    return result;
}

int cflow_child_stopped(pid_t pid) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    /* WSTOPPED alone: consumes the report of a stop (one per stop), never an exit's. */
    if (waitid(P_PID, (id_t)pid, &info, WSTOPPED | WNOHANG) != 0) return 0;
    return info.si_pid == pid && info.si_code == CLD_STOPPED;
}

/* Written by the thread that installs the handlers, read by the handler on whichever
   thread the signal lands: atomic, so that the handler is ordered after the write (a
   plain int was a data race, reported by ThreadSanitizer at every Ctrl-C). */
static int signal_pipe_fd = -1;

static void signal_forwarder(int sig) {
    int saved = errno;
    unsigned char byte = (unsigned char)sig;
    ssize_t ignored = write(__atomic_load_n(&signal_pipe_fd, __ATOMIC_ACQUIRE), &byte, 1);
    (void)ignored;
    errno = saved;
}

/* Installs `handler` for `sig` (SA_RESTART). Children set `sig` back to its default first:
   a child between its clone and its exec, in flow's memory, must not run a handler. */
static int install_handler_blocking(int sig, void (*handler)(int), const sigset_t *blocked) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = handler;
    action.sa_flags = SA_RESTART;
    action.sa_mask = *blocked;
    cflow_reset_in_children(sig);
    return sigaction(sig, &action, NULL);
}

static int install_handler(int sig, void (*handler)(int)) {
    sigset_t none;
    sigemptyset(&none);
    return install_handler_blocking(sig, handler, &none);
}

/* Each forwarded signal's handler blocks the others while it runs. Two of them pending at
   once (`kill -INT` then `kill -TERM` back to back, before flow ran) are handed over by
   the kernel lowest number first, each handler's frame on top of the last: with nothing
   blocked the later one's handler ran first, so the pipe said SIGTERM before SIGINT and a
   run sent SIGINT then SIGTERM ended 143 with the SIGTERM note (8 runs in 10; found by
   the events audit). Blocked, they are written in the kernel's order: ascending, the
   usual escalation (SIGINT, then SIGTERM; Ctrl-C, then Ctrl-\). */
int cflow_forward_signal(int sig, int pipe_fd) {
    __atomic_store_n(&signal_pipe_fd, pipe_fd, __ATOMIC_RELEASE);
    sigset_t forwarded;
    sigemptyset(&forwarded);
    sigaddset(&forwarded, SIGINT);
    sigaddset(&forwarded, SIGTERM);
    sigaddset(&forwarded, SIGHUP);
    sigaddset(&forwarded, SIGQUIT);
    return install_handler_blocking(sig, signal_forwarder, &forwarded);
}

int cflow_take_undelivered_signal(void) {
    sigset_t forwarded, old;
    sigemptyset(&forwarded);
    sigaddset(&forwarded, SIGINT);
    sigaddset(&forwarded, SIGTERM);
    sigaddset(&forwarded, SIGHUP);
    sigaddset(&forwarded, SIGQUIT);
    if (pthread_sigmask(SIG_BLOCK, &forwarded, &old) != 0) return 0;
    const struct timespec now = {0, 0};
    int sig = sigtimedwait(&forwarded, NULL, &now);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return sig > 0 ? sig : 0;
}

static void exit_on_signal(int sig) {
    _exit(128 + sig);
}

int cflow_exit_on_signal(int sig) {
    return install_handler(sig, exit_on_signal);
}

static void suspend_notifier(int sig) {
    (void)sig;
    int saved = errno;
    __atomic_store_n(&suspend_requested, 1, __ATOMIC_RELAXED);
    uint64_t one = 1;
    ssize_t ignored = write(__atomic_load_n(&suspend_eventfd, __ATOMIC_ACQUIRE), &one, sizeof one);
    (void)ignored;
    errno = saved;
}

int cflow_install_suspend_notifier(int eventfd) {
    /* As `signal_pipe_fd`: the handler may run on another thread. */
    __atomic_store_n(&suspend_eventfd, eventfd, __ATOMIC_RELEASE);
    return install_handler(SIGTSTP, suspend_notifier);
}

int cflow_take_suspend_request(void) {
    return __atomic_exchange_n(&suspend_requested, 0, __ATOMIC_RELAXED) != 0;
}

void cflow_stop_self(void) {
    /* Stopped by SIGTSTP itself, so that the shell reports the job as a Ctrl-Z stop: its
       default action for a moment, raised at this thread with the signal unblocked here,
       so that the stop happens before raise returns (that is, at once, not on another
       thread after the handler is back). */
    struct sigaction dfl, previous;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigset_t tstp, old_mask;
    sigemptyset(&tstp);
    sigaddset(&tstp, SIGTSTP);
    sigaction(SIGTSTP, &dfl, &previous);
    pthread_sigmask(SIG_UNBLOCK, &tstp, &old_mask);
    raise(SIGTSTP);
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    sigaction(SIGTSTP, &previous, NULL);
}

void cflow_consume_pending_sigpipe(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    struct timespec zero = {0, 0};
    while (sigtimedwait(&set, NULL, &zero) == SIGPIPE) {}
}

const void *cflow_memrchr(const void *bytes, int c, size_t count) {
    return memrchr(bytes, c, count);
}

size_t cflow_ensure_thread_stack(size_t minimum) {
    pthread_attr_t attr;
    if (pthread_getattr_default_np(&attr) != 0) return 0;
    size_t size = 0;
    if (pthread_attr_getstacksize(&attr, &size) == 0 && size < minimum
        && pthread_attr_setstacksize(&attr, minimum) == 0 && pthread_setattr_default_np(&attr) == 0) {
        size = minimum;
    }
    pthread_attr_destroy(&attr);
    return size;
}

void cflow_park_main_thread(void) {
    sigset_t none;
    sigemptyset(&none);
    for (;;) sigsuspend(&none);
}

int cflow_anonymous_temp_file(char *template_path) {
    int fd = mkostemp(template_path, O_CLOEXEC);
    if (fd >= 0) unlink(template_path);
    return fd;
}

int cflow_punch_hole(int fd, int64_t offset, int64_t length) {
    return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)offset, (off_t)length);
}

int cflow_malloc_one_arena(void) {
    return mallopt(M_ARENA_MAX, 1) == 1 ? 0 : -1;
}
