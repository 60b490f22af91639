/* Two producers and two consumers through a bounded queue guarded by one
 * mutex with two condition variables; each item is copied under the lock
 * and worked on outside it. Change: COPY_PCT (the copy under the lock). */
#include "work.h"
#ifndef COPY_PCT
#define COPY_PCT 100
#endif
#define ITEMS 40000
#define SLOTS 16

pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER, not_empty = PTHREAD_COND_INITIALIZER;
static uint64_t ring[SLOTS];
static int head, count;

__attribute__((noinline)) static void queue_put(uint64_t v)
{
    pthread_mutex_lock(&queue_lock);
    while (count == SLOTS)
        pthread_cond_wait(&not_full, &queue_lock);
    ring[(head + count) % SLOTS] = work(SCALED(400, COPY_PCT), v);
    count++;
    pthread_cond_signal(&not_empty);
    pthread_mutex_unlock(&queue_lock);
}

__attribute__((noinline)) static uint64_t queue_take(void)
{
    pthread_mutex_lock(&queue_lock);
    while (count == 0)
        pthread_cond_wait(&not_empty, &queue_lock);
    uint64_t v = work(SCALED(400, COPY_PCT), ring[head]);
    head = (head + 1) % SLOTS;
    count--;
    pthread_cond_signal(&not_full);
    pthread_mutex_unlock(&queue_lock);
    return v;
}

static void *producer(void *arg)
{
    uint64_t x = *(long *)arg + 1;
    for (int i = 0; i < ITEMS; i++) {
        x = work(1500, x);
        queue_put(x);
    }
    return NULL;
}

static uint64_t sink;
static void *consumer(void *arg)
{
    uint64_t x = *(long *)arg;
    for (int i = 0; i < ITEMS; i++)
        x = work(2000, queue_take() + x);
    __atomic_add_fetch(&sink, x, __ATOMIC_RELAXED);
    return NULL;
}

int main(void)
{
    pthread_t p[2], c[2];
    long ids[4] = {0, 1, 2, 3};
    for (int i = 0; i < 2; i++) {
        pthread_create(&p[i], NULL, producer, &ids[i]);
        pthread_create(&c[i], NULL, consumer, &ids[2 + i]);
    }
    join_threads(2, p);
    join_threads(2, c);
    printf("%llu\n", (unsigned long long)sink % 1000);
    return 0;
}
