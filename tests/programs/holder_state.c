/* Waits whose holder's state is known by construction, for the holder
 * split of the futex view (tests/holder_state.rs). One mode per run:
 *
 *   sleep    the holder of nap_lock sleeps 5 ms in nanosleep inside its
 *            section; the waiter takes the lock only once the holder has
 *            it.
 *   fsync DIR  as sleep, but instead of nanosleep the holder writes
 *            256 KiB to a file of its own in DIR and calls fsync, eight
 *            times: a holder blocked in I/O inside its section, for as
 *            long as the disk takes; the program measures the writes'
 *            and syncs' CPU and wall time, as in preempt.
 *   chain    a thread holds inner_lock and sleeps 5 ms inside; a second
 *            thread takes outer_lock, then waits for inner_lock; a third
 *            waits for outer_lock, whose holder is itself waiting on
 *            inner_lock.
 *   In sleep, fsync and chain, the holder starts its nap (or its syncs)
 *   only once the round's waiters are asleep on their words, so every
 *   wait holds all of it.
 *   preempt  the holder of busy_lock shares one CPU with two threads that
 *            only burn CPU, and holds for 2 ms of its own CPU time, so it
 *            is preempted for part of each hold; the waiter, on another
 *            CPU (when there is one), takes the lock once it is held. The
 *            program measures the holds' CPU time and wall time itself
 *            and prints them: the holder was running cpu/wall of the
 *            time, preempted the rest.
 *
 * Prints `pid=P mode=M rounds=N hold_wall_ns=W hold_cpu_ns=C`. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "asleep.h"

#define ROUNDS 12
#define NAP_NS 5000000L
#define HOLD_CPU_NS 2000000L

pthread_mutex_t nap_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t outer_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t inner_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t busy_lock = PTHREAD_MUTEX_INITIALIZER;

static atomic_int held = -1, outer_held = -1, done = -1, stop;
/* The waiting threads' ids, for asleep_on(). */
static atomic_int nap_waiter_tid, middle_tid, last_tid;
static atomic_long wall_ns, cpu_ns;

static long now(clockid_t c) {
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void nap(long ns) {
    struct timespec t = {ns / 1000000000L, ns % 1000000000L};
    nanosleep(&t, NULL);
}

/* The fsync mode's file (-1: the holder naps instead). */
static int sync_fd = -1;

/* What the holder does inside its section: writes and syncs its file,
 * or naps. */
static void inside(void) {
    static char block[256 * 1024];
    if (sync_fd < 0) {
        nap(NAP_NS);
        return;
    }
    /* Eight writes, each synced: the copies run, the syncs sleep for as
     * long as the disk takes (the program measures both: the holder ran
     * cpu/wall of it, slept or waited for a CPU the rest). */
    long w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < 8; i++) {
        memset(block, 'a' + (int)(now(CLOCK_MONOTONIC) % 26), sizeof block);
        if (pwrite(sync_fd, block, sizeof block, 0) != (ssize_t)sizeof block || fsync(sync_fd) != 0) {
            perror("holder_state: write and fsync");
            exit(1);
        }
    }
    atomic_fetch_add(&cpu_ns, now(CLOCK_THREAD_CPUTIME_ID) - c0);
    atomic_fetch_add(&wall_ns, now(CLOCK_MONOTONIC) - w0);
}

/* Until *flag reaches r (polled with short naps: outside every lock). */
static void until(atomic_int *flag, int r) {
    while (atomic_load(flag) < r)
        nap(20000);
}

static pid_t gettid_now(void) {
    return syscall(SYS_gettid);
}

/* The holder of `m`: takes it, says so, waits until the round's waiters
 * are asleep on their words, then does its inside and lets go, then waits
 * for the round to finish. Waiting first puts the whole of the inside in
 * every wait, however late a loaded machine runs the waiters: with the
 * inside first, a waiter that came late waited only for the holder's
 * polling (running), and the fsync mode's waits then held a part of its
 * syncs the program's measure of them could not say. */
static void *sleepy_holder(void *arg) {
    pthread_mutex_t *m = arg;
    for (int r = 0; r < ROUNDS; r++) {
        pthread_mutex_lock(m);
        atomic_store(&held, r);
        if (m == &nap_lock) {
            until_asleep_on(&nap_waiter_tid, &nap_lock);
        } else {
            until_asleep_on(&middle_tid, &inner_lock);
            until_asleep_on(&last_tid, &outer_lock);
        }
        inside();
        pthread_mutex_unlock(m);
        until(&done, r);
    }
    return NULL;
}

static void *nap_waiter(void *arg) {
    (void)arg;
    atomic_store(&nap_waiter_tid, gettid_now());
    for (int r = 0; r < ROUNDS; r++) {
        until(&held, r);
        pthread_mutex_lock(&nap_lock);
        pthread_mutex_unlock(&nap_lock);
        atomic_store(&done, r);
    }
    return NULL;
}

/* Holds outer_lock while it waits for inner_lock. */
static void *chain_middle(void *arg) {
    (void)arg;
    atomic_store(&middle_tid, gettid_now());
    for (int r = 0; r < ROUNDS; r++) {
        until(&held, r);
        pthread_mutex_lock(&outer_lock);
        atomic_store(&outer_held, r);
        pthread_mutex_lock(&inner_lock);
        pthread_mutex_unlock(&inner_lock);
        pthread_mutex_unlock(&outer_lock);
        until(&done, r);
    }
    return NULL;
}

static void *chain_last(void *arg) {
    (void)arg;
    atomic_store(&last_tid, gettid_now());
    for (int r = 0; r < ROUNDS; r++) {
        until(&outer_held, r);
        pthread_mutex_lock(&outer_lock);
        pthread_mutex_unlock(&outer_lock);
        atomic_store(&done, r);
    }
    return NULL;
}

/* Pins the calling thread to the `nth` CPU it may use (the last one if
 * there are fewer). */
static void on_cpu(int nth) {
    cpu_set_t allowed, one;
    sched_getaffinity(0, sizeof allowed, &allowed);
    CPU_ZERO(&one);
    for (int c = 0, seen = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed)) {
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            if (seen++ == nth)
                break;
        }
    sched_setaffinity(0, sizeof one, &one);
}

static void *busy_holder(void *arg) {
    (void)arg;
    on_cpu(0);
    for (int r = 0; r < ROUNDS; r++) {
        pthread_mutex_lock(&busy_lock);
        atomic_store(&held, r);
        long w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID), c;
        while ((c = now(CLOCK_THREAD_CPUTIME_ID)) - c0 < HOLD_CPU_NS)
            ;
        long w1 = now(CLOCK_MONOTONIC);
        pthread_mutex_unlock(&busy_lock);
        atomic_fetch_add(&wall_ns, w1 - w0);
        atomic_fetch_add(&cpu_ns, c - c0);
        until(&done, r);
    }
    atomic_store(&stop, 1);
    return NULL;
}

static void *busy_waiter(void *arg) {
    (void)arg;
    on_cpu(1);
    for (int r = 0; r < ROUNDS; r++) {
        until(&held, r);
        pthread_mutex_lock(&busy_lock);
        pthread_mutex_unlock(&busy_lock);
        atomic_store(&done, r);
    }
    return NULL;
}

static void *burner(void *arg) {
    (void)arg;
    on_cpu(0);
    while (!atomic_load(&stop))
        ;
    return NULL;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "sleep";
    pthread_t t[4];
    if (!strcmp(mode, "fsync")) {
        char path[4096];
        snprintf(path, sizeof path, "%s/holder_state.sync", argc > 2 ? argv[2] : ".");
        sync_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (sync_fd < 0) {
            perror(path);
            return 1;
        }
    }
    if (!strcmp(mode, "sleep") || !strcmp(mode, "fsync")) {
        pthread_create(&t[0], NULL, sleepy_holder, &nap_lock);
        pthread_create(&t[1], NULL, nap_waiter, NULL);
        pthread_join(t[0], NULL);
        pthread_join(t[1], NULL);
    } else if (!strcmp(mode, "chain")) {
        pthread_create(&t[0], NULL, sleepy_holder, &inner_lock);
        pthread_create(&t[1], NULL, chain_middle, NULL);
        pthread_create(&t[2], NULL, chain_last, NULL);
        for (int i = 0; i < 3; i++)
            pthread_join(t[i], NULL);
    } else if (!strcmp(mode, "preempt")) {
        pthread_create(&t[0], NULL, burner, NULL);
        pthread_create(&t[1], NULL, burner, NULL);
        pthread_create(&t[2], NULL, busy_holder, NULL);
        pthread_create(&t[3], NULL, busy_waiter, NULL);
        for (int i = 0; i < 4; i++)
            pthread_join(t[i], NULL);
    } else {
        fprintf(stderr, "mode: sleep, fsync DIR, chain or preempt\n");
        return 2;
    }
    printf("pid=%d mode=%s rounds=%d hold_wall_ns=%ld hold_cpu_ns=%ld\n", getpid(), mode, ROUNDS,
           atomic_load(&wall_ns), atomic_load(&cpu_ns));
    return 0;
}
