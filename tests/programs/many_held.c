/* Holds HELD mutexes at once, as an allocator's fork handler does with
 * every arena's mutex (jemalloc: four arenas per CPU). Two threads take
 * all of them in the same order, bump a counter under each, and release
 * them in reverse, ROUNDS times each; a third of them are initialized with
 * pthread_mutex_init, the rest statically. Exits 0 only if every counter
 * reads 2 x ROUNDS: a lost update means two threads held one mutex.
 * Built by tests/run_failures.rs. */
#include <pthread.h>
#include <stdio.h>

#define HELD 2000
#define ROUNDS 5

static pthread_mutex_t m[HELD];
static long counter[HELD];

static void *hold_all(void *arg) {
    (void)arg;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < HELD; i++) {
            pthread_mutex_lock(&m[i]);
            long c = counter[i];
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
            counter[i] = c + 1;
        }
        for (int i = HELD - 1; i >= 0; i--)
            pthread_mutex_unlock(&m[i]);
    }
    return NULL;
}

int main(void) {
    for (int i = 0; i < HELD; i++) {
        if (i % 3 == 0)
            pthread_mutex_init(&m[i], NULL);
        else
            m[i] = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    }
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, hold_all, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < HELD; i++) {
        if (counter[i] != 2 * ROUNDS) {
            fprintf(stderr, "many_held: mutex %d counted %ld, not %d\n", i, counter[i], 2 * ROUNDS);
            return 1;
        }
    }
    return 0;
}
