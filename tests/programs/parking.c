/* Waiting that is not contention, beside contention that is, each with a
 * known count (built by tests/parking.rs):
 *
 * - `gate`: the main thread holds it while PARKERS threads have nothing
 *   to do; each parker takes it only to let it go at once (redis's io
 *   threads park this way). Every round the main thread lets go only once
 *   each parker is asleep in the kernel on the gate's word (read from
 *   /proc/self/task/TID/syscall), so each parker's acquisition waits:
 *   ROUNDS x PARKERS parking waits.
 * - `queue_lock`: a consumer takes it while the main thread holds it,
 *   finds the queue empty and goes straight into a condition wait: ROUNDS
 *   parking waits; the main thread then queues an item and signals, and
 *   the consumer takes it out (a section that works).
 * - `work_lock`: WORKERS threads, started together, each take it WORK_OPS
 *   times for a busy section of 20 us, 2 us apart: contention, never
 *   parking.
 *
 * Bounded by rounds, not time. Prints the three mutexes' addresses. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "asleep.h"
#include "busy.h"

#define ROUNDS 20
#define PARKERS 2
#define WORKERS 2
#define WORK_OPS 200

pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t work_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static int queued;
static long taken;
static atomic_int round_no, passed, consumed, go;
static atomic_int parker_tids[PARKERS], consumer_tid;

static void until_asleep_elsewhere(atomic_int *tid, void *word) {
    unsigned long w;
    while ((w = asleep_on(atomic_load(tid))) == 0 || w == (unsigned long)word)
        sched_yield();
}

static void *parker(void *arg) {
    atomic_store(&parker_tids[(long)arg], syscall(SYS_gettid));
    for (int r = 1; r <= ROUNDS; r++) {
        while (atomic_load(&round_no) < r)
            sched_yield();
        pthread_mutex_lock(&gate);
        pthread_mutex_unlock(&gate);
        atomic_fetch_add(&passed, 1);
    }
    return NULL;
}

static void *consumer(void *arg) {
    (void)arg;
    atomic_store(&consumer_tid, syscall(SYS_gettid));
    for (int r = 1; r <= ROUNDS; r++) {
        while (atomic_load(&round_no) < r)
            sched_yield();
        pthread_mutex_lock(&queue_lock);
        while (queued == 0)
            pthread_cond_wait(&not_empty, &queue_lock);
        queued--;
        taken++;
        pthread_mutex_unlock(&queue_lock);
        atomic_fetch_add(&consumed, 1);
    }
    return NULL;
}

static void *worker(void *arg) {
    (void)arg;
    atomic_fetch_add(&go, 1);
    while (atomic_load(&go) < WORKERS)
        sched_yield();
    for (int i = 0; i < WORK_OPS; i++) {
        pthread_mutex_lock(&work_lock);
        busy(20000);
        pthread_mutex_unlock(&work_lock);
        busy(2000);
    }
    return NULL;
}

int main(void) {
    pthread_t t[PARKERS + 1 + WORKERS];
    pthread_mutex_lock(&gate);
    pthread_mutex_lock(&queue_lock);
    for (long i = 0; i < PARKERS; i++)
        pthread_create(&t[i], NULL, parker, (void *)i);
    pthread_create(&t[PARKERS], NULL, consumer, NULL);
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&t[PARKERS + 1 + i], NULL, worker, NULL);
    while (!atomic_load(&consumer_tid) || !atomic_load(&parker_tids[PARKERS - 1]) ||
           !atomic_load(&parker_tids[0]))
        sched_yield();
    for (int r = 1; r <= ROUNDS; r++) {
        atomic_store(&round_no, r);
        for (int i = 0; i < PARKERS; i++)
            until_asleep_on(&parker_tids[i], &gate);
        until_asleep_on(&consumer_tid, &queue_lock);
        pthread_mutex_unlock(&gate);
        pthread_mutex_unlock(&queue_lock);
        /* The consumer found nothing and waits for a signal. */
        until_asleep_elsewhere(&consumer_tid, &queue_lock);
        pthread_mutex_lock(&queue_lock);
        queued++;
        pthread_cond_signal(&not_empty);
        pthread_mutex_unlock(&queue_lock);
        while (atomic_load(&passed) < r * PARKERS || atomic_load(&consumed) < r)
            sched_yield();
        pthread_mutex_lock(&gate);
        pthread_mutex_lock(&queue_lock);
    }
    pthread_mutex_unlock(&queue_lock);
    pthread_mutex_unlock(&gate);
    for (int i = 0; i < PARKERS + 1 + WORKERS; i++)
        pthread_join(t[i], NULL);
    printf("gate %p queue_lock %p work_lock %p taken %ld\n", (void *)&gate, (void *)&queue_lock,
           (void *)&work_lock, taken);
    return 0;
}
