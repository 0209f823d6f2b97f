#define _GNU_SOURCE
#include "CFlowSys.h"
#include "unintercepted.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The process guard (the why is in ProcessGuard.swift). It is a process of its own that
   shares flow's memory (CLONE_VM without CLONE_THREAD): starting it costs one clone and
   no exec, and after flow's death the memory stays mapped for it, so it can read the list
   of groups flow kept there. Because it runs beside flow's threads in the same memory it
   must not touch glibc's per-thread state: errno and the thread pointer are those of the
   thread that cloned it. So it makes raw system calls only, on a stack of its own. */

#if defined(__x86_64__) || defined(__aarch64__)
#define GUARD_SUPPORTED 1

CFLOW_CLONE_CODE __attribute__((no_stack_protector)) static inline long raw_syscall(long n, long a, long b, long c, long d, long e) {
#if defined(__x86_64__)
    long ret;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8) : "rcx", "r11", "memory");
    return ret;
#else
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
    return x0;
#endif
}
#else
#define GUARD_SUPPORTED 0
#endif

/* Up to 2^22 slots (pid_max's ceiling), reserved but only touched as used. */
#define GUARD_CAPACITY (1 << 22)
#define GUARD_STACK (64 * 1024)

static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;
static int32_t *guard_slots = NULL;
static int32_t guard_count = 0; /* slots ever used; read by the guard with an atomic load */
static pid_t guard_pid = -1;
static int guard_write = -1;

#if GUARD_SUPPORTED
CFLOW_CLONE_CODE __attribute__((no_stack_protector)) static int guard_main(void *ends) {
    /* The pipe's ends come in the argument (a copy on the guard's stack): the statics are
       flow's to change meanwhile. */
    const int keep = (int)((uintptr_t)ends & 0xffffffffu);
    const int write_end = (int)((uintptr_t)ends >> 32);
    /* Its own copy of flow's descriptor table: keep only the read end. Holding the write
       end would hide flow's end; holding a step's pipes would hide the step's. */
    (void)raw_syscall(SYS_close, write_end, 0, 0, 0, 0);
    if (raw_syscall(SYS_close_range, (unsigned)keep + 1, ~0U, 0, 0, 0) == 0) {
        (void)raw_syscall(SYS_close_range, 0, (unsigned)keep - 1, 0, 0, 0);
    } else {
        /* Before Linux 5.9: one by one, as far as flow's descriptors plausibly go. */
        for (int fd = 0; fd < 65536; fd++) {
            if (fd != keep) (void)raw_syscall(SYS_close, fd, 0, 0, 0, 0);
        }
    }
    /* Out of flow's process group, into one of its own: `kill -9 -- -PGID` (a supervisor,
       a CI runner or a terminal killing flow's job as a whole) must not kill the guard with
       flow, or the steps, each in a group of its own, would be left running. */
    (void)raw_syscall(SYS_setpgid, 0, 0, 0, 0, 0);
    /* Into the root: the guard must not keep a directory (a mount) busy. */
    (void)raw_syscall(SYS_chdir, (long)"/", 0, 0, 0, 0);
    (void)raw_syscall(SYS_prctl, PR_SET_NAME, (long)"flow-guard", 0, 0, 0);
    /* It inherited the priority of the thread that cloned it (a libdispatch thread's,
       raised for its QoS); it needs none. */
    (void)raw_syscall(SYS_setpriority, PRIO_PROCESS, 0, 0, 0, 0);
    /* Asking for no event: only POLLHUP, when the last write end closes, wakes it. Every
       signal stays blocked (the mask flow's spawning thread had during the clone). */
    struct pollfd hangup = {keep, 0, 0};
    while (raw_syscall(SYS_ppoll, (long)&hangup, 1, 0, 0, 8) <= 0) {}
    const int32_t count = __atomic_load_n(&guard_count, __ATOMIC_ACQUIRE);
    for (int32_t i = 0; i < count; i++) {
        const int32_t group = __atomic_load_n(&guard_slots[i], __ATOMIC_ACQUIRE);
        if (group > 0) (void)raw_syscall(SYS_kill, -group, SIGKILL, 0, 0, 0);
    }
    return 0; /* clone's trampoline makes the exit system call */
}
#endif

/* Valgrind runs only the clones of fork, vfork and threads, and aborts the whole program
   on any other: under it (its preload library is the sign), flow runs unguarded. */
static int under_valgrind(void) {
    const char *preload = getenv("LD_PRELOAD");
    return preload != NULL && strstr(preload, "/vgpreload") != NULL;
}

pid_t cflow_guard_start(void) {
#if GUARD_SUPPORTED
    if (under_valgrind()) {
        errno = ENOTSUP;
        return -1;
    }
    pthread_mutex_lock(&guard_lock);
    if (guard_pid > 0) {
        pthread_mutex_unlock(&guard_lock);
        return guard_pid;
    }
    int ends[2] = {-1, -1};
    void *slots = mmap(NULL, (size_t)GUARD_CAPACITY * sizeof(int32_t), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    void *stack = mmap(NULL, GUARD_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (slots == MAP_FAILED || stack == MAP_FAILED || pipe2(ends, O_CLOEXEC) != 0) goto fail;
    guard_slots = slots;
    guard_write = ends[1];
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    void *argument = (void *)(((uintptr_t)(uint32_t)ends[1] << 32) | (uint32_t)ends[0]);
    pid_t pid = UNINTERCEPTED(clone)(guard_main, (char *)stack + GUARD_STACK, CLONE_VM | SIGCHLD, argument);
    int saved = errno;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    close(ends[0]);
    if (pid < 0) {
        close(ends[1]);
        guard_write = -1;
        errno = saved;
        goto fail_mapped;
    }
    guard_pid = pid;
    pthread_mutex_unlock(&guard_lock);
    return pid;
fail:
    if (ends[0] >= 0) { close(ends[0]); close(ends[1]); }
fail_mapped:
    /* The mappings stay (reserved, untouched: nothing to give back) and no retry is made. */
    pthread_mutex_unlock(&guard_lock);
    return -1;
#else
    errno = ENOSYS;
    return -1;
#endif
}

void cflow_guard_set(int32_t slot, pid_t group) {
    if (guard_slots == NULL || slot < 0 || slot >= GUARD_CAPACITY) return;
    __atomic_store_n(&guard_slots[slot], (int32_t)group, __ATOMIC_RELEASE);
    int32_t count = __atomic_load_n(&guard_count, __ATOMIC_RELAXED);
    while (slot >= count &&
           !__atomic_compare_exchange_n(&guard_count, &count, slot + 1, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {}
}

pid_t cflow_guard_pid(void) {
    pthread_mutex_lock(&guard_lock);
    pid_t pid = guard_pid;
    pthread_mutex_unlock(&guard_lock);
    return pid;
}

int cflow_guard_reap_if_exited(void) {
    int reaped = 0;
    pthread_mutex_lock(&guard_lock);
    if (guard_pid > 0) {
        int status;
        pid_t r;
        while ((r = waitpid(guard_pid, &status, WNOHANG)) < 0 && errno == EINTR) {}
        if (r == guard_pid) {
            /* Forgotten as it is reaped: its pid may be anyone's from now on, and
               cflow_guard_stop would SIGKILL that one at flow's exit. */
            close(guard_write);
            guard_write = -1;
            guard_pid = -1;
            reaped = 1;
        }
    }
    pthread_mutex_unlock(&guard_lock);
    return reaped;
}

void cflow_guard_stop(int kill_now) {
    pthread_mutex_lock(&guard_lock);
    if (guard_pid > 0) {
        if (kill_now) (void)kill(guard_pid, SIGKILL);
        close(guard_write);
        guard_write = -1;
        int status;
        while (waitpid(guard_pid, &status, 0) < 0 && errno == EINTR) {}
        guard_pid = -1;
    }
    pthread_mutex_unlock(&guard_lock);
}
