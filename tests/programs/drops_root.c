/* A server's habit: start as root, take its locks, then drop to nobody
 * (setgid, setuid) and go on taking them before it exits normally. Two
 * threads take one mutex ROUNDS times each, half before the drop and half
 * after. Built by tests/run_safety.rs. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define ROUNDS 1000

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long count;

static void *work(void *arg) {
    (void)arg;
    for (int i = 0; i < ROUNDS / 2; i++) {
        pthread_mutex_lock(&m);
        count++;
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

static void both(void) {
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, work, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
}

int main(void) {
    both();
    if (setgid(65534) != 0 || setuid(65534) != 0) {
        perror("drops_root: setuid");
        return 1;
    }
    both();
    return count == 2 * ROUNDS ? 0 : 1;
}
