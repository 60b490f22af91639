/* One mutex whose critical section lasts HOLD_NS nanoseconds (the first
 * argument) of busy waiting, taken ROUNDS times by each of four threads
 * that do OUTSIDE_NS of work between acquisitions: on two CPUs the mutex
 * serializes the program, so its wall time follows the hold. For
 * `contend run --what-if`: the prediction made at one length is checked
 * against the program run at a shorter one. Bounded by rounds, not time.
 * Built by tests/choice.rs and scripts/experiments/what-if.py. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "busy.h"

#define THREADS 4
#define ROUNDS 2000
#define OUTSIDE_NS 2000

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long hold_ns;

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        pthread_mutex_lock(&m);
        busy(hold_ns);
        pthread_mutex_unlock(&m);
        busy(OUTSIDE_NS);
    }
    return 0;
}

int main(int argc, char **argv) {
    hold_ns = argc > 1 ? atol(argv[1]) : 20000;
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], 0, worker, 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], 0);
    printf("pid=%d mutex=%p hold_ns=%ld\n", getpid(), (void *)&m, hold_ns);
    return 0;
}
