/* Two mutexes locked through one wrapper (take/give), for the profile's
 * stacks and holders: `a` is held 5 ms by long_holder while waiter_a
 * waits for it; `b` is taken for 100 µs by waiter_b in every thread, so
 * long_holder causes by far the most wait. The wrapper locks both mutexes
 * for three callers, so the profile must fold it away and name the
 * callers. Each thread runs ROUNDS rounds: the work is bounded, not the
 * time. Built by tests/profile.rs (and tests/figures.rs, for a figure). */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#define ROUNDS 40

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;
static atomic_int waiting;

__attribute__((noinline)) static void take(pthread_mutex_t *m) { pthread_mutex_lock(m); }
__attribute__((noinline)) static void give(pthread_mutex_t *m) { pthread_mutex_unlock(m); }

/* Holds `a` until the waiter is about to ask for it, then a little
 * longer, so that its try-lock almost always finds `a` held. */
__attribute__((noinline)) static void long_holder(void) {
    take(&a);
    /* Polled by sleeping, not by sched_yield: on a busy machine each
     * yield can cost a whole time slice of another program, and the
     * flag never comes once the waiter has finished its rounds. */
    for (int polls = 0; !atomic_load(&waiting) && polls < 1000; polls++)
        usleep(20);
    usleep(5000);
    give(&a);
}

__attribute__((noinline)) static void waiter_a(void) {
    atomic_store(&waiting, 1);
    take(&a);
    atomic_store(&waiting, 0);
    give(&a);
}

__attribute__((noinline)) static void waiter_b(void) {
    take(&b);
    usleep(100);
    give(&b);
}

static void *holder(void *arg) {
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        long_holder();
        waiter_b();
        usleep(500);
    }
    return 0;
}

static void *waiter(void *arg) {
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        usleep(300);
        waiter_a();
        waiter_b();
    }
    return 0;
}

int main(void) {
    pthread_t t[3];
    pthread_create(&t[0], 0, holder, 0);
    pthread_create(&t[1], 0, waiter, 0);
    pthread_create(&t[2], 0, waiter, 0);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], 0);
    return 0;
}
