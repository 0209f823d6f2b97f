#define _GNU_SOURCE
#include "CFlowSys.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434 /* same number on every architecture */
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

int cflow_spawn_file_actions_addchdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

int cflow_spawn_file_actions_addclosefrom(posix_spawn_file_actions_t *actions, int from) {
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 34)
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
#else
    (void)actions; (void)from;
    return ENOSYS;
#endif
}

int cflow_spawn_file_actions_addtcsetpgrp(posix_spawn_file_actions_t *actions, int fd) {
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 35)
    return posix_spawn_file_actions_addtcsetpgrp_np(actions, fd);
#else
    (void)actions; (void)fd;
    return ENOSYS;
#endif
}

int cflow_child_has_exited(pid_t pid) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0) return -1;
    return info.si_pid != 0 ? 1 : 0;
}

int cflow_decode_wait_status(int status, int *value) {
    if (WIFEXITED(status)) { *value = WEXITSTATUS(status); return 1; }
    if (WIFSIGNALED(status)) { *value = WTERMSIG(status); return 2; }
    *value = 0;
    return 0;
}

/* Up to 8 eventfds (one per fallback hub; normally zero or one). The count is published
   after the slot is written, so the handler never reads an unset slot. */
#define CFLOW_MAX_NOTIFIERS 8
static int notifier_fds[CFLOW_MAX_NOTIFIERS];
static volatile sig_atomic_t notifier_count = 0;
static struct sigaction previous_action;

static void sigchld_notifier(int sig, siginfo_t *info, void *context) {
    int saved = errno; /* a handler must not clobber the interrupted code's errno */
    uint64_t one = 1;
    int count = notifier_count;
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
        if (result == 0) notifier_count = notifier_count + 1;
    }
    pthread_mutex_unlock(&lock);
    return result;
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
