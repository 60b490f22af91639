/* Readers and writers through one mutex (no rwlock): 4 threads, nine
 * reads for each write, a read's section short and a write's long.
 * Change: RW_PCT (every section of the mutex, reads and writes). */
#include "work.h"
#ifndef RW_PCT
#define RW_PCT 100
#endif
#define THREADS 4
#define OPS 100000

pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t config[8];

__attribute__((noinline)) static uint64_t config_access(int write, uint64_t x)
{
    pthread_mutex_lock(&config_lock);
    uint64_t v;
    if (write)
        v = config[x & 7] = work(SCALED(1200, RW_PCT), config[x & 7] + x);
    else
        v = work(SCALED(150, RW_PCT), config[x & 7] ^ x);
    pthread_mutex_unlock(&config_lock);
    return v;
}

static void *worker(void *arg)
{
    uint64_t x = *(long *)arg + 1;
    for (int i = 0; i < OPS; i++) {
        x = work(500, x);
        x ^= config_access(i % 10 == 0, x);
    }
    return (void *)(uintptr_t)x;
}

int main(void)
{
    pthread_t t[THREADS];
    long ids[THREADS];
    start_threads(THREADS, worker, t, ids);
    join_threads(THREADS, t);
    printf("%llu\n", (unsigned long long)config[0] % 1000);
    return 0;
}
