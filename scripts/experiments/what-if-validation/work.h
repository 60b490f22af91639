/* Shared by the what-if validation programs: a unit of work that the
 * compiler cannot remove or reorder (about 1 ns per iteration on a
 * 2-3 GHz core), scaled at compile time by the change under test. */
#ifndef WORK_H
#define WORK_H
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* A change scales one piece of work to PCT percent of its length. */
#define SCALED(n, pct) ((unsigned)(((uint64_t)(n) * (pct)) / 100))

static inline uint64_t work(unsigned n, uint64_t x)
{
    for (unsigned i = 0; i < n; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

__attribute__((unused)) static void start_threads(int n, void *(*f)(void *), pthread_t *t, long *ids)
{
    for (int i = 0; i < n; i++) {
        ids[i] = i;
        if (pthread_create(&t[i], NULL, f, &ids[i]) != 0) {
            perror("pthread_create");
            exit(1);
        }
    }
}

__attribute__((unused)) static void join_threads(int n, pthread_t *t)
{
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
}
#endif
