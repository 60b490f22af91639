/* One global mutex taken every 8th operation for about 1 µs of work, by
 * 4 threads. Changes: GLOBAL_PCT (50: half the work under the lock; 0:
 * the work and the lock's hold gone, the lock still taken). */
#include "work.h"
#ifndef GLOBAL_PCT
#define GLOBAL_PCT 100
#endif
#define THREADS 4
#define OPS 200000

pthread_mutex_t global_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t shared;

__attribute__((noinline)) static void global_update(uint64_t x)
{
    pthread_mutex_lock(&global_lock);
    shared = work(SCALED(1000, GLOBAL_PCT), shared + x);
    pthread_mutex_unlock(&global_lock);
}

static void *worker(void *arg)
{
    uint64_t x = *(long *)arg + 1;
    for (int i = 0; i < OPS; i++) {
        x = work(250, x);
        if (i % 8 == 0)
            global_update(x);
    }
    return (void *)(uintptr_t)x;
}

int main(void)
{
    pthread_t t[THREADS];
    long ids[THREADS];
    start_threads(THREADS, worker, t, ids);
    join_threads(THREADS, t);
    printf("%llu\n", (unsigned long long)shared % 1000);
    return 0;
}
