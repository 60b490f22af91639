/* Two threads that hand a byte back and forth through two pipes, ROUNDS
 * times: every hand-off is a context switch, and no call is a futex
 * call (the join aside). What the futex view costs such a program is
 * the cost of following its threads at all, not of its futex calls:
 * the kernel switches each followed thread's tracepoint events out and
 * in at every one of its context switches. Built and timed by
 * scripts/experiments/futex-view-cost.py. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define ROUNDS 50000

static int to_pong[2], to_ping[2];

static void *pong(void *arg) {
    (void)arg;
    char c;
    for (int i = 0; i < ROUNDS; i++) {
        if (read(to_pong[0], &c, 1) != 1 || write(to_ping[1], &c, 1) != 1)
            return (void *)1;
    }
    return NULL;
}

int main(void) {
    if (pipe(to_pong) || pipe(to_ping))
        return 1;
    pthread_t t;
    if (pthread_create(&t, NULL, pong, NULL))
        return 1;
    char c = 'x';
    for (int i = 0; i < ROUNDS; i++) {
        if (write(to_pong[1], &c, 1) != 1 || read(to_ping[0], &c, 1) != 1)
            return 1;
    }
    void *failed;
    pthread_join(t, &failed);
    printf("%d hand-offs\n", ROUNDS);
    return failed != NULL;
}
