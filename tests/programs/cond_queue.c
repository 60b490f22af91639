/* A bounded queue under one mutex and two condition variables, and a
 * second mutex with its own condition variable on which the main thread
 * waits for the consumers to finish: for per-mutex choice, where the
 * queue's mutex may be swapped while the other stays glibc's, each
 * condition variable following its own mutex. Every item is counted
 * once: the program checks the sum and exits 1 if it is wrong. Bounded
 * by items, not time. Built by tests/choice.rs. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define ITEMS 20000
#define SLOTS 4
#define PRODUCERS 2
#define CONSUMERS 2

static pthread_mutex_t queue = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static long slots[SLOTS];
static int head, count, produced, consumed_items;
static long sum;

static pthread_mutex_t finish = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t finished = PTHREAD_COND_INITIALIZER;
static int consumers_done;

static void *producer(void *arg) {
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&queue);
        while (count == SLOTS && produced < ITEMS)
            pthread_cond_wait(&not_full, &queue);
        if (produced == ITEMS) {
            pthread_mutex_unlock(&queue);
            return 0;
        }
        slots[(head + count) % SLOTS] = ++produced;
        count++;
        pthread_cond_signal(&not_empty);
        pthread_mutex_unlock(&queue);
    }
}

static void *consumer(void *arg) {
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&queue);
        while (count == 0 && consumed_items < ITEMS)
            pthread_cond_wait(&not_empty, &queue);
        if (count == 0) {
            pthread_mutex_unlock(&queue);
            break;
        }
        sum += slots[head];
        head = (head + 1) % SLOTS;
        count--;
        if (++consumed_items == ITEMS)
            pthread_cond_broadcast(&not_empty);
        pthread_cond_signal(&not_full);
        pthread_mutex_unlock(&queue);
    }
    pthread_mutex_lock(&finish);
    consumers_done++;
    pthread_cond_signal(&finished);
    pthread_mutex_unlock(&finish);
    return 0;
}

int main(void) {
    pthread_t t[PRODUCERS + CONSUMERS];
    for (int i = 0; i < PRODUCERS; i++)
        pthread_create(&t[i], 0, producer, 0);
    for (int i = 0; i < CONSUMERS; i++)
        pthread_create(&t[PRODUCERS + i], 0, consumer, 0);
    pthread_mutex_lock(&finish);
    while (consumers_done < CONSUMERS)
        pthread_cond_wait(&finished, &finish);
    pthread_mutex_unlock(&finish);
    for (int i = 0; i < PRODUCERS + CONSUMERS; i++)
        pthread_join(t[i], 0);
    long want = (long)ITEMS * (ITEMS + 1) / 2;
    printf("pid=%d queue=%p finish=%p sum=%ld want=%ld\n", getpid(), (void *)&queue, (void *)&finish, sum, want);
    return sum == want ? 0 : 1;
}
