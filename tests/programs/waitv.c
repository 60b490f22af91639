/* A waiter on two futex words at once, through futex_waitv(2) (Linux
 * 5.16; what Wine's and Proton's fsync use for WaitForMultipleObjects):
 * the futex view must read the words from the caller's array, which the
 * kernel's tracepoint record has only the address of. Two posters each
 * bump a global word of their own, POSTS times, and wake it with
 * FUTEX_WAKE; the consumer waits on both words in one call until it has
 * seen every post. The program counts its own calls and what they
 * returned (0 or 1: which word woke it; EAGAIN: a word had changed
 * before it slept), and prints them, so a test can hold each word's row
 * to them exactly. Built by tests/futex_view.rs. */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

#define POSTS 3000

/* linux/futex.h's struct futex_waitv, spelled here so that older
 * headers build it too. */
struct waitv {
    uint64_t val;
    uint64_t uaddr;
    uint32_t flags;
    uint32_t reserved;
};

/* FUTEX2_SIZE_U32 | FUTEX2_PRIVATE */
#define WAITV_FLAGS (0x02 | 128)

_Atomic unsigned post_a __attribute__((aligned(64)));
_Atomic unsigned post_b __attribute__((aligned(64)));
static atomic_ulong wakes_a, wakes_b;

static void *poster(void *arg) {
    _Atomic unsigned *word = arg;
    atomic_ulong *wakes = word == &post_a ? &wakes_a : &wakes_b;
    for (int i = 0; i < POSTS; i++) {
        atomic_fetch_add(word, 1);
        syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        atomic_fetch_add(wakes, 1);
        /* Let the consumer sleep now and then. */
        struct timespec pause = {0, (i % 7) * 20000};
        nanosleep(&pause, NULL);
    }
    return NULL;
}

int main(void) {
    unsigned long calls = 0, woken_a = 0, woken_b = 0, eagain = 0, other = 0;
    pthread_t t[2];
    pthread_create(&t[0], NULL, poster, &post_a);
    pthread_create(&t[1], NULL, poster, &post_b);
    for (;;) {
        unsigned a = atomic_load(&post_a), b = atomic_load(&post_b);
        if (a == POSTS && b == POSTS)
            break;
        struct waitv w[2] = {
            {a, (uintptr_t)&post_a, WAITV_FLAGS, 0},
            {b, (uintptr_t)&post_b, WAITV_FLAGS, 0},
        };
        long r = syscall(SYS_futex_waitv, w, 2, 0, NULL, CLOCK_MONOTONIC);
        calls++;
        if (r == 0)
            woken_a++;
        else if (r == 1)
            woken_b++;
        else if (errno == EAGAIN)
            eagain++;
        else if (errno == ENOSYS) {
            printf("futex_waitv: not in this kernel\n");
            return 2;
        } else
            other++;
    }
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
    printf("pid=%d calls=%lu woken_a=%lu woken_b=%lu eagain=%lu other=%lu wakes_a=%lu wakes_b=%lu\n",
           (int)getpid(), calls, woken_a, woken_b, eagain, other, atomic_load(&wakes_a),
           atomic_load(&wakes_b));
    return 0;
}
