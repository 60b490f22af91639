/* The least an LD_PRELOAD interposer can be: pthread_mutex_lock and
 * pthread_mutex_unlock as one of spin2.c's locks (LOCK as there: 1 tas,
 * 2 ttas; not 3, pthread_spin, with which spin2.c hung), on the mutex's
 * first word, with no check of the mutex's type, no count and no mode.
 * Only for spin2.c, whose one mutex is statically initialized (zero:
 * free); a program
 * with a recursive or process-shared mutex would break under it.
 *
 * Preloaded into spin2.c's glibc build, it prices the call any
 * interposer pays, so that the validation page can say how much of a
 * swap's cost over the compiled-in lock is the call, and how much is
 * contend's interposer beyond it. */
#include <pthread.h>

#ifndef LOCK
#define LOCK 1
#endif

int pthread_mutex_lock(pthread_mutex_t *m)
{
#if LOCK == 1
    while (__atomic_exchange_n((int *)m, 1, __ATOMIC_ACQUIRE))
        __builtin_ia32_pause();
#elif LOCK == 2
    for (;;) {
        if (!__atomic_exchange_n((int *)m, 1, __ATOMIC_ACQUIRE))
            break;
        while (__atomic_load_n((int *)m, __ATOMIC_RELAXED))
            __builtin_ia32_pause();
    }
#else
#error "LOCK is 1 (tas) or 2 (ttas)"
#endif
    return 0;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
    __atomic_store_n((int *)m, 0, __ATOMIC_RELEASE);
    return 0;
}
