/* pthread rwlocks and a spinlock, for the profile's counts of them: every
 * call the program makes is counted here, and the profile must report the
 * same numbers per lock. Three threads run ROUNDS rounds of every
 * acquisition call (rd/wr, try, timed, clock); in each round one holder
 * keeps a lock until the other thread is about to ask for it, so every
 * kind of wait happens (a reader behind a writer, a writer behind a
 * reader, a spinner behind a holder). Bounded by rounds, not time.
 * Prints its pid, the locks' addresses and the counts, on one line. Built by tests/profile.rs. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 30
#define THREADS 3

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t wpref; /* writer-preferring, initialized in main */
static pthread_spinlock_t spin;
static atomic_long reads, writes, read_busy, write_busy, spins, spin_busy;
static atomic_int asking, holding;
static pthread_barrier_t step;

static struct timespec later(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    t.tv_sec += 60;
    return t;
}

/* Holds until the other thread says it is about to ask, then a little
 * longer, so that its try-lock finds the lock held. */
static void hold_for_asker(void) {
    atomic_store(&holding, 1);
    /* Sleeping polls, not yields: a yield on a busy machine can cost a
     * time slice, and 100000 of them ran for minutes. */
    for (int polls = 0; !atomic_load(&asking) && polls < 1000; polls++)
        usleep(20);
    usleep(2000);
    atomic_store(&asking, 0);
    atomic_store(&holding, 0);
}

static void every_call(pthread_rwlock_t *l) {
    pthread_rwlock_rdlock(l);
    reads++;
    pthread_rwlock_unlock(l);
    pthread_rwlock_wrlock(l);
    writes++;
    pthread_rwlock_unlock(l);
    if (pthread_rwlock_tryrdlock(l) == 0) {
        reads++;
        pthread_rwlock_unlock(l);
    } else {
        read_busy++;
    }
    if (pthread_rwlock_trywrlock(l) == 0) {
        writes++;
        pthread_rwlock_unlock(l);
    } else {
        write_busy++;
    }
    struct timespec rt = later(CLOCK_REALTIME), mono = later(CLOCK_MONOTONIC);
    if (pthread_rwlock_timedrdlock(l, &rt) == 0) {
        reads++;
        pthread_rwlock_unlock(l);
    }
    if (pthread_rwlock_timedwrlock(l, &rt) == 0) {
        writes++;
        pthread_rwlock_unlock(l);
    }
    if (pthread_rwlock_clockrdlock(l, CLOCK_MONOTONIC, &mono) == 0) {
        reads++;
        pthread_rwlock_unlock(l);
    }
    if (pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, &mono) == 0) {
        writes++;
        pthread_rwlock_unlock(l);
    }
    pthread_spin_lock(&spin);
    spins++;
    pthread_spin_unlock(&spin);
    if (pthread_spin_trylock(&spin) == 0) {
        spins++;
        pthread_spin_unlock(&spin);
    } else {
        spin_busy++;
    }
}

static void *worker(void *arg) {
    long id = (long)arg;
    for (int i = 0; i < ROUNDS; i++) {
        every_call(i % 2 ? &rw : &wpref);
        /* Threads 0 and 1 take turns: one holds, the other waits. */
        pthread_barrier_wait(&step);
        if (id == 0) {
            int what = i % 3;
            if (what == 0) {
                pthread_rwlock_wrlock(&rw); /* a reader waits behind it */
                writes++;
                hold_for_asker();
                pthread_rwlock_unlock(&rw);
            } else if (what == 1) {
                pthread_rwlock_rdlock(&rw); /* a writer waits behind it */
                reads++;
                hold_for_asker();
                pthread_rwlock_unlock(&rw);
            } else {
                pthread_spin_lock(&spin); /* a spinner waits behind it */
                spins++;
                hold_for_asker();
                pthread_spin_unlock(&spin);
            }
        } else if (id == 1) {
            int what = i % 3;
            /* Thread 0 takes it first: a bounded number of sleeping
             * polls, since on a busy machine 100 yields could pass
             * before thread 0 ran at all (no wait was then seen). */
            for (int polls = 0; !atomic_load(&holding) && polls < 10000; polls++)
                usleep(20);
            atomic_store(&asking, 1);
            if (what == 0) {
                pthread_rwlock_rdlock(&rw);
                reads++;
                pthread_rwlock_unlock(&rw);
            } else if (what == 1) {
                pthread_rwlock_wrlock(&rw);
                writes++;
                pthread_rwlock_unlock(&rw);
            } else {
                pthread_spin_lock(&spin);
                spins++;
                pthread_spin_unlock(&spin);
            }
        }
        pthread_barrier_wait(&step);
    }
    return NULL;
}

int main(void) {
    pthread_rwlockattr_t a;
    pthread_rwlockattr_init(&a);
    pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&wpref, &a);
    pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
    pthread_barrier_init(&step, NULL, THREADS);
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    printf("pid=%d rw=%p wpref=%p spin=%p reads=%ld writes=%ld read_busy=%ld write_busy=%ld spins=%ld "
           "spin_busy=%ld\n", (int)getpid(), (void *)&rw, (void *)&wpref, (void *)&spin, reads, writes,
           read_busy, write_busy, spins, spin_busy);
    return 0;
}
