/* The mutex re-taken at the end of glibc's condition wait, for the
 * profile's kernel waits: each round, WAITERS threads wait on a condition
 * variable; the main thread broadcasts while holding the mutex and keeps
 * it until every woken waiter is asleep in the kernel on the mutex's word
 * (read from /proc/self/task/TID/syscall), so each re-acquisition blocks
 * inside glibc, where the interposer cannot time it, and only the
 * kernel's count shows it. Bounded by rounds, not time. Prints its pid,
 * the mutex's address and the condition waits the program made. Built by
 * tests/profile.rs. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "asleep.h"

#define ROUNDS 10
#define WAITERS 3

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int generation;
static atomic_int waiting;
static atomic_long cond_waits;
static pid_t tids[WAITERS];

static void *waiter(void *arg) {
    long id = (long)arg;
    tids[id] = (pid_t)syscall(SYS_gettid);
    for (int r = 0; r < ROUNDS; r++) {
        pthread_mutex_lock(&m);
        int mine = generation;
        atomic_fetch_add(&waiting, 1);
        while (generation == mine) {
            cond_waits++;
            pthread_cond_wait(&c, &m);
        }
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

int main(void) {
    pthread_t t[WAITERS];
    for (long i = 0; i < WAITERS; i++)
        pthread_create(&t[i], NULL, waiter, (void *)i);
    for (int r = 0; r < ROUNDS; r++) {
        while (atomic_load(&waiting) < WAITERS * (r + 1))
            sched_yield();
        pthread_mutex_lock(&m);
        generation++;
        pthread_cond_broadcast(&c);
        /* Hold the mutex until every waiter sleeps on it (or a bound of
         * tries passes: the program never hangs). */
        for (int w = 0; w < WAITERS; w++)
            for (long tries = 0; tries < 1000000 && asleep_on(tids[w]) != (unsigned long)&m; tries++)
                sched_yield();
        pthread_mutex_unlock(&m);
    }
    for (int i = 0; i < WAITERS; i++)
        pthread_join(t[i], NULL);
    printf("pid=%d mutex=%p cond_waits=%ld\n", (int)getpid(), (void *)&m, (long)cond_waits);
    return 0;
}
