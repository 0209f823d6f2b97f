/* ThreadSanitizer builds only: makes Swift's `Synchronization.Mutex` visible to TSan.

   Why: on Linux, `Mutex.withLock` takes and gives back the lock with an atomic compare-and-
   swap inlined into flow's code, which TSan sees, but under contention it goes through
   `_lockSlow` and `_unlockSlow` in the toolchain's (uninstrumented) Synchronization
   library, where a priority-inheritance futex hands the lock to the waiter in the kernel.
   TSan then sees no ordering between the two holders, and reported every state a
   contended `Mutex` guards (the journal recorder's, the event bus's) as a data race: a
   4-thread counter under `Mutex` was reported although it summed right. These two
   definitions take the library's place (a definition in the executable comes first),
   call it, and say the acquire and the release to TSan on the lock word's address, the
   one the inlined compare-and-swap uses. Nothing of this is compiled in other builds. */
#define _GNU_SOURCE
#include "unintercepted.h"

#if CFLOW_TSAN
#include <stdint.h>
#include <stdio.h>

void __tsan_acquire(void *addr);
void __tsan_release(void *addr);

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define TRY_LOCK_SLOW "$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"

/* Swift's calling convention: `self` (the handle, passed by address) in the context
   register, after the formal arguments. */
typedef __attribute__((swiftcall)) void (*lock_slow_fn)(uint32_t, void *__attribute__((swift_context)));
typedef __attribute__((swiftcall)) _Bool (*try_lock_slow_fn)(void *__attribute__((swift_context)));
typedef __attribute__((swiftcall)) void (*unlock_slow_fn)(void *__attribute__((swift_context)));

static lock_slow_fn real_lock_slow;
static try_lock_slow_fn real_try_lock_slow;
static unlock_slow_fn real_unlock_slow;

__attribute__((constructor)) static void find_mutex_slow_paths(void) {
    real_lock_slow = (lock_slow_fn)dlsym(RTLD_NEXT, LOCK_SLOW);
    real_try_lock_slow = (try_lock_slow_fn)dlsym(RTLD_NEXT, TRY_LOCK_SLOW);
    real_unlock_slow = (unlock_slow_fn)dlsym(RTLD_NEXT, UNLOCK_SLOW);
    if (!real_lock_slow || !real_try_lock_slow || !real_unlock_slow) {
        /* Another toolchain whose Mutex is built otherwise: said, not guessed at. */
        fputs("flow (TSan build): Synchronization's Mutex slow paths not found; see Sources/CFlowSys/tsan_mutex.c\n", stderr);
        abort();
    }
}

__attribute__((swiftcall)) void cflow_tsan_lock_slow(uint32_t id, void *__attribute__((swift_context)) handle) __asm__(LOCK_SLOW);
__attribute__((swiftcall)) _Bool cflow_tsan_try_lock_slow(void *__attribute__((swift_context)) handle) __asm__(TRY_LOCK_SLOW);
__attribute__((swiftcall)) void cflow_tsan_unlock_slow(void *__attribute__((swift_context)) handle) __asm__(UNLOCK_SLOW);

__attribute__((swiftcall)) void cflow_tsan_lock_slow(uint32_t id, void *__attribute__((swift_context)) handle) {
    real_lock_slow(id, handle);
    __tsan_acquire(handle);
}

__attribute__((swiftcall)) _Bool cflow_tsan_try_lock_slow(void *__attribute__((swift_context)) handle) {
    _Bool taken = real_try_lock_slow(handle);
    if (taken) __tsan_acquire(handle);
    return taken;
}

__attribute__((swiftcall)) void cflow_tsan_unlock_slow(void *__attribute__((swift_context)) handle) {
    __tsan_release(handle);
    real_unlock_slow(handle);
}
#endif
