/* Busy waiting for a number of nanoseconds on CLOCK_MONOTONIC: work a
 * thread does on a CPU, of a known length. Shared by the test programs
 * whose critical sections or gaps are given in time. */
#ifndef CONTEND_TEST_BUSY_H
#define CONTEND_TEST_BUSY_H

#include <time.h>

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void busy(long ns) {
    long start = now_ns();
    while (now_ns() - start < ns)
        ;
}

#endif
