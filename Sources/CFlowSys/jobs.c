/* Swift concurrency's global jobs on libdispatch's overcommit pool, for a process that has
   no /proc of its own (see cflow_keep_jobs_off_watched_pool in CFlowSys.h). */
#define _GNU_SOURCE
#include "CFlowSys.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

/* libdispatch, declared here rather than through <dispatch/dispatch.h>, which a C target is
   not given: every Swift program on Linux links it. */
extern void *dispatch_get_global_queue(long identifier, unsigned long flags);
extern void dispatch_async_f(void *queue, void *context, void (*work)(void *));
extern void dispatch_after_f(uint64_t when, void *queue, void *context, void (*work)(void *));
extern uint64_t dispatch_time(uint64_t when, int64_t delta);
#define CFLOW_DISPATCH_TIME_NOW 0ull
/* The private flag of dispatch_get_global_queue that gives the overcommit root queue
   (libdispatch's DISPATCH_QUEUE_OVERCOMMIT): its workers are not watched. */
#define CFLOW_DISPATCH_QUEUE_OVERCOMMIT 0x2ul

/* The Swift runtime's hooks (swift/Runtime/Concurrency.h) and job entry point, all in the
   Swift calling convention. A `SerialExecutorRef` is two words, passed as two arguments;
   the generic executor is both zero. */
struct cflow_swift_job;
typedef __attribute__((swiftcall)) void (*cflow_enqueue_original)(struct cflow_swift_job *);
typedef __attribute__((swiftcall)) void (*cflow_enqueue_delay_original)(unsigned long long, struct cflow_swift_job *);
typedef __attribute__((swiftcall)) void (*cflow_enqueue_deadline_original)(long long, long long, long long, long long, int,
                                                                           struct cflow_swift_job *);
extern __attribute__((swiftcall)) void (*swift_task_enqueueGlobal_hook)(struct cflow_swift_job *, cflow_enqueue_original);
extern __attribute__((swiftcall)) void (*swift_task_enqueueGlobalWithDelay_hook)(unsigned long long, struct cflow_swift_job *,
                                                                                 cflow_enqueue_delay_original);
extern __attribute__((swiftcall)) void (*swift_task_enqueueGlobalWithDeadline_hook)(long long, long long, long long, long long,
                                                                                    int, struct cflow_swift_job *,
                                                                                    cflow_enqueue_deadline_original);
extern __attribute__((swiftcall)) void swift_job_run(struct cflow_swift_job *, const void *, uintptr_t);
extern __attribute__((swiftcall)) void swift_get_time(long long *seconds, long long *nanoseconds, int clock);

static void *overcommit_queue;

static void run_job(void *job) {
    swift_job_run(job, 0, 0);
}

static __attribute__((swiftcall)) void enqueue(struct cflow_swift_job *job, cflow_enqueue_original original) {
    (void)original;
    dispatch_async_f(overcommit_queue, job, run_job);
}

static void enqueue_after(uint64_t nanoseconds, struct cflow_swift_job *job) {
    int64_t delta = nanoseconds > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)nanoseconds;
    dispatch_after_f(dispatch_time(CFLOW_DISPATCH_TIME_NOW, delta), overcommit_queue, job, run_job);
}

static __attribute__((swiftcall)) void enqueue_with_delay(unsigned long long delay, struct cflow_swift_job *job,
                                                          cflow_enqueue_delay_original original) {
    (void)original;
    enqueue_after(delay, job);
}

/* A deadline on the runtime's clock `clock` (continuous, suspending): as a delay from now on
   that clock, which the runtime reads itself. The tolerance is not used (nor is it by the
   runtime's own dispatch executor for most deadlines). */
static __attribute__((swiftcall)) void enqueue_with_deadline(long long sec, long long nsec, long long tsec, long long tnsec,
                                                             int clock, struct cflow_swift_job *job,
                                                             cflow_enqueue_deadline_original original) {
    (void)tsec, (void)tnsec, (void)original;
    long long now_sec = 0, now_nsec = 0;
    swift_get_time(&now_sec, &now_nsec, clock);
    long double left = (long double)(sec - now_sec) * 1e9L + (long double)(nsec - now_nsec);
    enqueue_after(left <= 0 ? 0 : left >= (long double)INT64_MAX ? (uint64_t)INT64_MAX : (uint64_t)left, job);
}

int cflow_pool_can_watch_workers(void) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)syscall(SYS_gettid));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    close(fd);
    return 1;
}

void cflow_keep_jobs_off_watched_pool(void) {
    overcommit_queue = dispatch_get_global_queue(0, CFLOW_DISPATCH_QUEUE_OVERCOMMIT);
    swift_task_enqueueGlobal_hook = enqueue;
    swift_task_enqueueGlobalWithDelay_hook = enqueue_with_delay;
    swift_task_enqueueGlobalWithDeadline_hook = enqueue_with_deadline;
}
