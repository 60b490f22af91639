/* The futex word a thread of this process sleeps on, from
 * /proc/self/task/TID/syscall: how a test program knows that another of
 * its threads is blocked in the kernel on a lock (not merely about to
 * be). Shared by the test programs that need a wait to be certain. */
#ifndef CONTEND_TEST_ASLEEP_H
#define CONTEND_TEST_ASLEEP_H

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/types.h>

/* The word thread `tid` sleeps on in futex(2) now, or 0. */
static unsigned long asleep_on(pid_t tid) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    long nr = -1;
    unsigned long arg0 = 0;
    int ok = fgets(line, sizeof line, f) && sscanf(line, "%ld %lx", &nr, &arg0) == 2;
    fclose(f);
    return ok && nr == SYS_futex ? arg0 : 0;
}

/* Until thread *tid sleeps in the kernel on `word`, polled between
 * yields. *tid is read on every poll: 0 (not yet said by that thread)
 * is asleep on nothing. */
static inline void until_asleep_on(atomic_int *tid, void *word) {
    while (asleep_on(atomic_load(tid)) != (unsigned long)word)
        sched_yield();
}

#endif
