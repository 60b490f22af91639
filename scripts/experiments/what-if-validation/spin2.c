/* Two threads taking one mutex for short holds with short work between:
 * where a spinning lock beats glibc's sleeping mutex. LOCK selects the
 * lock compiled in: 0 glibc's mutex (what contend swaps), 1 test-and-set
 * with a pause after each failed exchange, 2 test-and-test-and-set with
 * pause, 3 pthread_spin: 1 and 2 are contend's tas and ttas, instruction
 * for instruction, so that a swap is compared with its own algorithm. */
#include "work.h"
#ifndef LOCK
#define LOCK 0
#endif
#define THREADS 2
#define OPS 1500000

pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
__attribute__((unused)) static int flag;
static pthread_spinlock_t spin;
static uint64_t counter;

static inline void acquire(void)
{
#if LOCK == 0
    pthread_mutex_lock(&counter_lock);
#elif LOCK == 1
    while (__atomic_exchange_n(&flag, 1, __ATOMIC_ACQUIRE))
        __builtin_ia32_pause();
#elif LOCK == 2
    for (;;) {
        if (!__atomic_exchange_n(&flag, 1, __ATOMIC_ACQUIRE))
            break;
        while (__atomic_load_n(&flag, __ATOMIC_RELAXED))
            __builtin_ia32_pause();
    }
#else
    pthread_spin_lock(&spin);
#endif
}

static inline void release(void)
{
#if LOCK == 0
    pthread_mutex_unlock(&counter_lock);
#elif LOCK == 1 || LOCK == 2
    __atomic_store_n(&flag, 0, __ATOMIC_RELEASE);
#else
    pthread_spin_unlock(&spin);
#endif
}

__attribute__((noinline)) static void counter_add(uint64_t x)
{
    acquire();
    counter = work(40, counter + x);
    release();
}

static void *worker(void *arg)
{
    uint64_t x = *(long *)arg + 1;
    for (int i = 0; i < OPS; i++) {
        x = work(60, x);
        counter_add(x);
    }
    return NULL;
}

int main(void)
{
    pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
    pthread_t t[THREADS];
    long ids[THREADS];
    start_threads(THREADS, worker, t, ids);
    join_threads(THREADS, t);
    printf("%llu\n", (unsigned long long)counter % 1000);
    return 0;
}
