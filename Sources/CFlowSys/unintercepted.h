/* The libc calls made by code that runs in a clone sharing flow's memory (the spawn child
   before its exec, the process guard), as `UNINTERCEPTED(name)`.

   Why: ThreadSanitizer intercepts `clone` as a fork (it locks its runtime in the parent and
   resets it in the child) and `sigaction`, `dup2` and `_exit` to keep tables of its own.
   In a CLONE_VM child those tables ARE the parent's: the child reset the parent's runtime
   under its other threads (a failed CHECK in `SlotAttachAndLock`, "starting new threads
   after multi-threaded fork"), its `sigaction(SIG_DFL)` would leave TSan's table saying
   flow had no handler, and its `_exit` would run TSan's end-of-process report in flow's
   memory. Under TSan these names therefore go to libc's own functions (the next
   definition after TSan's, as TSan itself finds them), and the functions that run in the
   clone are not instrumented (`CFLOW_CLONE_CODE`). In every other build they are the plain
   calls: nothing changes. */
#ifndef CFLOW_UNINTERCEPTED_H
#define CFLOW_UNINTERCEPTED_H

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CFLOW_TSAN 1
#endif
#endif
#if !defined(CFLOW_TSAN) && defined(__SANITIZE_THREAD__)
#define CFLOW_TSAN 1
#endif

#if CFLOW_TSAN
#include <dlfcn.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

/* Resolved once, before main (before any clone). */
struct cflow_libc {
    int (*clone)(int (*)(void *), void *, int, void *, ...);
    int (*sigaction)(int, const struct sigaction *, struct sigaction *);
    int (*sigprocmask)(int, const sigset_t *, sigset_t *);
    int (*sigpending)(sigset_t *);
    int (*dup2)(int, int);
    int (*prctl)(int, ...);
    void (*_exit)(int);
};
extern struct cflow_libc cflow_libc;
#define UNINTERCEPTED(name) (cflow_libc.name)
#define CFLOW_CLONE_CODE __attribute__((disable_sanitizer_instrumentation))
#else
#define UNINTERCEPTED(name) name
#define CFLOW_CLONE_CODE
#endif

#endif
