/* GLib's GMutex, which on Linux is a futex lock of GLib's own
 * (gthread-posix.c: g_mutex_lock's slow path calls futex(2) itself, not
 * pthread_mutex_lock): four threads add to a global ledger under a
 * global GMutex with some work inside, so they wait. The main thread
 * holds the ledger until every worker is about to lock it, and 10 ms
 * more, so that every execution has waits however the machine schedules
 * it. Built by scripts/experiments/futex-view-programs.py. */
#include <glib.h>
#include <stdio.h>

#define THREADS 4
#define ROUNDS 20000

static GMutex ledger_lock;
static volatile unsigned long ledger;
static gint ready;

static gpointer worker(gpointer arg) {
    unsigned long t = GPOINTER_TO_SIZE(arg);
    g_atomic_int_inc(&ready);
    for (unsigned long i = 0; i < ROUNDS; i++) {
        g_mutex_lock(&ledger_lock);
        for (unsigned long k = 0; k < 200; k++)
            ledger = ledger * 31 + (i ^ k ^ t);
        g_mutex_unlock(&ledger_lock);
    }
    return NULL;
}

int main(void) {
    GThread *threads[THREADS];
    g_mutex_lock(&ledger_lock);
    for (unsigned long t = 0; t < THREADS; t++)
        threads[t] = g_thread_new("worker", worker, GSIZE_TO_POINTER(t));
    while (g_atomic_int_get(&ready) < THREADS)
        g_usleep(100);
    g_usleep(10000);
    g_mutex_unlock(&ledger_lock);
    for (int t = 0; t < THREADS; t++)
        g_thread_join(threads[t]);
    printf("ledger=%lu\n", ledger);
    return 0;
}
