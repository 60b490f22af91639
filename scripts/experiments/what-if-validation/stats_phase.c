/* A hot, cheap statistics mutex off the critical path beside a rare, long
 * mutex that serialises a phase: 4 threads, each op some private work,
 * then the stats mutex for a few counters, and every 64th op the phase
 * mutex for a long stretch. Changes: STATS_PCT, PHASE_PCT (percent of
 * the section's work kept). */
#include "work.h"
#ifndef STATS_PCT
#define STATS_PCT 100
#endif
#ifndef PHASE_PCT
#define PHASE_PCT 100
#endif
#define THREADS 4
#define OPS 60000

pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t phase_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t stats[4], phase_state;

/* Each mutex is taken in its own function, so that contend names it. */
__attribute__((noinline)) static void stats_add(int i, uint64_t x)
{
    pthread_mutex_lock(&stats_lock);
    stats[i & 3] = work(SCALED(60, STATS_PCT), stats[i & 3] + x);
    pthread_mutex_unlock(&stats_lock);
}

__attribute__((noinline)) static void phase_step(uint64_t x)
{
    pthread_mutex_lock(&phase_lock);
    phase_state = work(SCALED(30000, PHASE_PCT), phase_state + x);
    pthread_mutex_unlock(&phase_lock);
}

static void *worker(void *arg)
{
    uint64_t x = *(long *)arg + 1;
    for (int i = 0; i < OPS; i++) {
        x = work(600, x);
        stats_add(i, x);
        if (i % 64 == 0)
            phase_step(x);
    }
    return (void *)(uintptr_t)x;
}

int main(void)
{
    pthread_t t[THREADS];
    long ids[THREADS];
    start_threads(THREADS, worker, t, ids);
    join_threads(THREADS, t);
    printf("%llu\n", (unsigned long long)(stats[0] ^ phase_state) % 1000);
    return 0;
}
