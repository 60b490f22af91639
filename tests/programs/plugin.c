/* A library loaded with dlopen and unloaded with dlclose before the
 * program exits (as 7z does with its codecs): its mutex is locked from
 * plugin_work, which the profile must name although the library is gone
 * when the interposer writes its report. Built with -shared by
 * tests/names.rs; plugin_host.c loads it. */
#include <pthread.h>

static pthread_mutex_t guard = PTHREAD_MUTEX_INITIALIZER;
static long counter;

__attribute__((noinline)) void plugin_work(int n) {
    for (int i = 0; i < n; i++) {
        pthread_mutex_lock(&guard);
        counter++;
        pthread_mutex_unlock(&guard);
    }
}

static void *worker(void *arg) {
    plugin_work(*(int *)arg);
    return 0;
}

/* Two threads, n acquisitions each; the count taken. */
long plugin_run(int n) {
    pthread_t t;
    pthread_create(&t, 0, worker, &n);
    plugin_work(n);
    pthread_join(t, 0);
    return counter;
}
