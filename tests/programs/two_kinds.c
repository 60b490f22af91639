/* Two mutexes that want opposite locks, for `contend run --recommend`:
 * `quick` is held 1 µs at a time by two threads that work 1 µs between
 * acquisitions, so a waiter's turn comes within about a microsecond: a
 * lock that spins briefly before it sleeps (contend's adaptive) hands it
 * over at once, while glibc's mutex puts the waiter to sleep, and a sleeper
 * takes longer to wake (several µs here) than the holder takes to come
 * back, so one thread at a time runs. `slow` is held for about 200 µs of
 * computation by four threads, so a lock that spins on it takes the two
 * CPUs from the holder, and glibc's sleeping waiters win. The phases run
 * one after the other; the work is bounded (iterations), not the time.
 * Built by tests/choice.rs. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "busy.h"

#define QUICK_THREADS 2
#define QUICK_ROUNDS 100000
#define QUICK_NS 1000
#define SLOW_THREADS 4
#define SLOW_ROUNDS 400
#define SLOW_WORK 200000

static pthread_mutex_t quick = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t slow = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long counter;

static void *quick_worker(void *arg) {
    (void)arg;
    for (int i = 0; i < QUICK_ROUNDS; i++) {
        pthread_mutex_lock(&quick);
        counter++;
        busy(QUICK_NS);
        pthread_mutex_unlock(&quick);
        busy(QUICK_NS);
    }
    return 0;
}

static void *slow_worker(void *arg) {
    (void)arg;
    for (int i = 0; i < SLOW_ROUNDS; i++) {
        pthread_mutex_lock(&slow);
        for (volatile int k = 0; k < SLOW_WORK; k++)
            ;
        pthread_mutex_unlock(&slow);
    }
    return 0;
}

static void phase(void *(*worker)(void *), int n) {
    pthread_t t[8];
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], 0, worker, 0);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], 0);
}

int main(void) {
    phase(quick_worker, QUICK_THREADS);
    phase(slow_worker, SLOW_THREADS);
    printf("pid=%d quick=%p slow=%p counter=%lu\n", getpid(), (void *)&quick, (void *)&slow, counter);
    return 0;
}
