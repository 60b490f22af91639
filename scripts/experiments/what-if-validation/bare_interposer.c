/* The least an LD_PRELOAD interposer can be: pthread_mutex_lock and
 * pthread_mutex_unlock as one of spin2.c's locks (LOCK as there: 1 tas,
 * 2 ttas, 3 pthread_spin), on the mutex's first word, with no check of
 * the mutex's type, no count and no mode. LOCK 3 is glibc's x86-64
 * pthread_spin_lock with the word counted the other way (0 free, as
 * contend's pthread-spin): glibc's own function on a zeroed mutex would
 * find it held and spin for ever, which is why an earlier version that
 * called it hung spin2.c.
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
#elif LOCK == 3
    while (__atomic_fetch_add((int *)m, 1, __ATOMIC_ACQUIRE))
        do
            __builtin_ia32_pause();
        while (__atomic_load_n((int *)m, __ATOMIC_RELAXED));
#else
#error "LOCK is 1 (tas), 2 (ttas) or 3 (pthread_spin)"
#endif
    return 0;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
    __atomic_store_n((int *)m, 0, __ATOMIC_RELEASE);
    return 0;
}
