/* A lock built on futex(2) directly, never through pthread_mutex_lock:
 * the futex view must see it as the interposer cannot. Drepper's mutex
 * ("Futexes Are Tricky", mutex #2: 0 free, 1 held, 2 held with waiters)
 * on a global word, raw_lock, taken by THREADS threads ROUNDS times each
 * with a short hold. The main thread holds the lock until a worker has
 * marked it contended, so that every execution has waits, however the
 * machine schedules it. The program counts its own futex calls and what
 * they returned, and prints them, so a test can hold the view's row to
 * them exactly. With the argument `wait` it first says `ready` and waits
 * for a line on stdin, so that `contend attach` can follow it from its
 * first futex call. Built by tests/futex_view.rs. */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define THREADS 4
#define ROUNDS 20000

_Atomic unsigned raw_lock __attribute__((aligned(64)));
static atomic_ulong waits, woken, eagain, other, wakes, woke;
static volatile unsigned long counter;

static long futex(_Atomic unsigned *word, int op, unsigned val) {
    return syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

static void lock(void) {
    unsigned c = 0;
    if (atomic_compare_exchange_strong(&raw_lock, &c, 1))
        return;
    if (c != 2)
        c = atomic_exchange(&raw_lock, 2);
    while (c != 0) {
        long r = futex(&raw_lock, FUTEX_WAIT_PRIVATE, 2);
        atomic_fetch_add(&waits, 1);
        if (r == 0)
            atomic_fetch_add(&woken, 1);
        else if (errno == EAGAIN)
            atomic_fetch_add(&eagain, 1);
        else
            atomic_fetch_add(&other, 1);
        c = atomic_exchange(&raw_lock, 2);
    }
}

static void unlock(void) {
    if (atomic_fetch_sub(&raw_lock, 1) != 1) {
        atomic_store(&raw_lock, 0);
        long r = futex(&raw_lock, FUTEX_WAKE_PRIVATE, 1);
        atomic_fetch_add(&wakes, 1);
        if (r > 0)
            atomic_fetch_add(&woke, (unsigned long)r);
    }
}

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        lock();
        for (int k = 0; k < 200; k++)
            counter++;
        unlock();
        for (int k = 0; k < 100; k++)
            __asm__ volatile("" ::: "memory");
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "wait") == 0) {
        char line[8];
        printf("ready\n");
        fflush(stdout);
        if (!fgets(line, sizeof line, stdin))
            return 1;
    }
    pthread_t t[THREADS];
    lock();
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    /* A worker that finds the lock held marks it 2, then waits. */
    while (atomic_load(&raw_lock) != 2)
        usleep(100);
    usleep(1000);
    unlock();
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    printf("pid=%d raw_lock=%p waits=%lu woken=%lu eagain=%lu other=%lu wakes=%lu woke=%lu counter=%lu\n",
           (int)getpid(), (void *)&raw_lock, atomic_load(&waits), atomic_load(&woken), atomic_load(&eagain),
           atomic_load(&other), atomic_load(&wakes), atomic_load(&woke), counter);
    return 0;
}
