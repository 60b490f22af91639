/* A chain of two mutexes: the outer one's section does some work, then
 * takes the inner one for more; 4 threads. Changes: OUTER_PCT (the outer
 * section's own work), INNER_PCT (the inner section's work, which lies
 * inside the outer section too). */
#include "work.h"
#ifndef OUTER_PCT
#define OUTER_PCT 100
#endif
#ifndef INNER_PCT
#define INNER_PCT 100
#endif
#define THREADS 4
#define OPS 60000

pthread_mutex_t outer_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t inner_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t outer_state, inner_state;

__attribute__((noinline)) static void inner_step(uint64_t x)
{
    pthread_mutex_lock(&inner_lock);
    inner_state = work(SCALED(300, INNER_PCT), inner_state + x);
    pthread_mutex_unlock(&inner_lock);
}

__attribute__((noinline)) static void outer_step(uint64_t x)
{
    pthread_mutex_lock(&outer_lock);
    outer_state = work(SCALED(300, OUTER_PCT), outer_state + x);
    inner_step(outer_state);
    pthread_mutex_unlock(&outer_lock);
}

static void *worker(void *arg)
{
    uint64_t x = *(long *)arg + 1;
    for (int i = 0; i < OPS; i++) {
        x = work(1500, x);
        if (i % 2 == 0)
            outer_step(x);
        else
            inner_step(x);
    }
    return (void *)(uintptr_t)x;
}

int main(void)
{
    pthread_t t[THREADS];
    long ids[THREADS];
    start_threads(THREADS, worker, t, ids);
    join_threads(THREADS, t);
    printf("%llu\n", (unsigned long long)(outer_state ^ inner_state) % 1000);
    return 0;
}
