/* A table of 16 stripes, each with its own mutex, and one table mutex
 * for the rare whole-table step: half the operations go to stripe 0 (a
 * hot key). Changes: HOT_PCT (the work under stripe 0's mutex alone),
 * TABLE_PCT (the work under the table mutex). */
#include "work.h"
#ifndef HOT_PCT
#define HOT_PCT 100
#endif
#ifndef TABLE_PCT
#define TABLE_PCT 100
#endif
#define THREADS 4
#define OPS 120000
#define STRIPES 16

pthread_mutex_t hot_stripe_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t stripe_lock[STRIPES];
pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t cell[STRIPES], table_sum;

__attribute__((noinline)) static void hot_update(uint64_t x)
{
    pthread_mutex_lock(&hot_stripe_lock);
    cell[0] = work(SCALED(200, HOT_PCT), cell[0] + x);
    pthread_mutex_unlock(&hot_stripe_lock);
}

__attribute__((noinline)) static void stripe_update(int s, uint64_t x)
{
    pthread_mutex_lock(&stripe_lock[s]);
    cell[s] = work(200, cell[s] + x);
    pthread_mutex_unlock(&stripe_lock[s]);
}

__attribute__((noinline)) static void table_step(uint64_t x)
{
    pthread_mutex_lock(&table_lock);
    table_sum = work(SCALED(4000, TABLE_PCT), table_sum + x);
    pthread_mutex_unlock(&table_lock);
}

static void *worker(void *arg)
{
    uint64_t x = *(long *)arg + 1;
    for (int i = 0; i < OPS; i++) {
        x = work(400, x);
        /* A high bit: the LCG's low bit flips at every step, so after an
         * even number of steps it keeps its parity, and `x & 1` sent
         * every operation of threads 0 and 2 to the hot stripe and none
         * of threads 1 and 3. */
        if ((x >> 40) & 1)
            hot_update(x);
        else
            stripe_update(1 + (x >> 8) % (STRIPES - 1), x);
        if (i % 32 == 0)
            table_step(x);
    }
    return (void *)(uintptr_t)x;
}

int main(void)
{
    for (int s = 0; s < STRIPES; s++)
        pthread_mutex_init(&stripe_lock[s], NULL);
    pthread_t t[THREADS];
    long ids[THREADS];
    start_threads(THREADS, worker, t, ids);
    join_threads(THREADS, t);
    printf("%llu\n", (unsigned long long)(table_sum ^ cell[0]) % 1000);
    return 0;
}
