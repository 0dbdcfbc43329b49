/* wake_floor: the notify-to-handler latency of a program with the shape of
 * PMIx event notification and nothing else (no PMIx), the floor that
 * bench/pmix_event_bench.c's figure is compared with (issue 17 item 2).
 *
 * A relay process (the server's place) and N receiver processes, each joined
 * to the relay by an AF_UNIX stream socket. Receiver 0's main thread writes
 * an event (its CLOCK_MONOTONIC send time) to the relay every `gap`
 * microseconds, as a notifier's caller would; the relay, one thread in
 * epoll_wait, reads it and writes it to every receiver, receiver 0 included;
 * each receiver's second thread (the progress thread's place), in
 * epoll_wait on its socket, reads it and records arrival minus send time.
 * That is two wake-ups per receiver (relay, receiver thread) and one write
 * per hop, what any server-routed notification must pay at least.
 *
 * usage: wake_floor [receivers] [events] [gap_us]     (16 400 2000)
 * Output: RESULT floor_median <ns> (median over receivers of each one's
 * median), RESULT floor_p90 <ns> (median over receivers of each one's 90th
 * percentile), and an INFO line. Exit 1 on any failure or if an event is
 * lost (each receiver waits at most 10 s for the next). Nothing is asserted
 * on time. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { MSG_GO = 1, MSG_EVENT = 2, MSG_RESULT = 3 };
struct msg {
    uint64_t type, a, b;
};

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t pct(uint64_t *v, size_t n, double p) {
    if (n == 0) return 0;
    qsort(v, n, sizeof *v, cmp_u64);
    return v[(size_t)(p * (double)(n - 1))];
}

static void die(const char *what) {
    fprintf(stderr, "wake_floor: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void write_msg(int fd, const struct msg *m) {
    const char *p = (const char *)m;
    size_t left = sizeof *m;
    while (left > 0) {
        ssize_t n = write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) die("write");
        p += n;
        left -= (size_t)n;
    }
}

/* Reads one message, waiting at most 10 s in epoll_wait first. */
static void read_msg(int ep, int fd, struct msg *m) {
    char *p = (char *)m;
    size_t left = sizeof *m;
    while (left > 0) {
        ssize_t n = read(fd, p, left);
        if (n > 0) {
            p += n;
            left -= (size_t)n;
            continue;
        }
        if (n == 0) {
            fprintf(stderr, "wake_floor: peer closed\n");
            exit(1);
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN) die("read");
        struct epoll_event ev;
        int r = epoll_wait(ep, &ev, 1, 10000);
        if (r == 0) {
            fprintf(stderr, "wake_floor: no message for 10 s\n");
            exit(1);
        }
        if (r < 0 && errno != EINTR) die("epoll_wait");
    }
}

static void set_nonblock(int fd) {
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) die("fcntl");
}

static int watch(int fd) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) die("epoll_create1");
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) die("epoll_ctl");
    return ep;
}

struct receiver {
    int fd;
    size_t events;
    uint64_t *lat;
};

static void *receive(void *arg) {
    struct receiver *r = arg;
    int ep = watch(r->fd);
    for (size_t i = 0; i < r->events; ++i) {
        struct msg m;
        read_msg(ep, r->fd, &m);
        if (m.type != MSG_EVENT) {
            fprintf(stderr, "wake_floor: unexpected message %llu\n", (unsigned long long)m.type);
            exit(1);
        }
        r->lat[i] = now_ns() - m.a;
    }
    close(ep);
    return NULL;
}

static int child(int fd, int index, size_t events, long gap_us) {
    struct receiver r = {.fd = fd, .events = events, .lat = calloc(events, sizeof(uint64_t))};
    if (r.lat == NULL) return 1;
    /* Non-blocking reads (the receiver thread waits in epoll_wait, as a
     * progress thread does); writes stay small enough never to block. */
    struct msg go;
    int ep = watch(fd);
    set_nonblock(fd);
    read_msg(ep, fd, &go);
    close(ep);
    pthread_t th;
    if (pthread_create(&th, NULL, receive, &r) != 0) die("pthread_create");
    if (index == 0) {
        for (size_t i = 0; i < events; ++i) {
            struct msg m = {.type = MSG_EVENT, .a = now_ns()};
            write_msg(fd, &m);
            usleep((useconds_t)gap_us);
        }
    }
    pthread_join(th, NULL);
    struct msg res = {
        .type = MSG_RESULT, .a = pct(r.lat, events, 0.5), .b = pct(r.lat, events, 0.9)};
    write_msg(fd, &res);
    free(r.lat);
    return 0;
}

int main(int argc, char **argv) {
    const int n = argc > 1 ? atoi(argv[1]) : 16;
    const size_t events = argc > 2 ? (size_t)atol(argv[2]) : 400;
    const long gap_us = argc > 3 ? atol(argv[3]) : 2000;
    if (n < 1 || n > 4096 || events < 1 || gap_us < 0) {
        fprintf(stderr, "usage: wake_floor [receivers] [events] [gap_us]\n");
        return 2;
    }
    int *fds = calloc((size_t)n, sizeof *fds);
    pid_t *pids = calloc((size_t)n, sizeof *pids);
    if (fds == NULL || pids == NULL) return 1;
    for (int i = 0; i < n; ++i) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) die("socketpair");
        pids[i] = fork();
        if (pids[i] < 0) die("fork");
        if (pids[i] == 0) {
            close(sv[0]);
            for (int j = 0; j < i; ++j) close(fds[j]);
            _exit(child(sv[1], i, events, gap_us));
        }
        close(sv[1]);
        fds[i] = sv[0];
        set_nonblock(fds[i]);
    }
    /* The relay: one thread in epoll_wait over every receiver's socket. */
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) die("epoll_create1");
    for (int i = 0; i < n; ++i) {
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev) < 0) die("epoll_ctl");
    }
    for (int i = 0; i < n; ++i) {
        struct msg go = {.type = MSG_GO};
        write_msg(fds[i], &go);
    }
    uint64_t *med = calloc((size_t)n, sizeof *med), *p90 = calloc((size_t)n, sizeof *p90);
    char *done = calloc((size_t)n, 1);
    if (med == NULL || p90 == NULL || done == NULL) return 1;
    size_t relayed = 0;
    int results = 0;
    struct epoll_event evs[64];
    while (results < n) {
        int r = epoll_wait(ep, evs, 64, 15000);
        if (r == 0) {
            fprintf(stderr, "wake_floor: relay idle for 15 s (%zu events relayed)\n", relayed);
            return 1;
        }
        if (r < 0) {
            if (errno == EINTR) continue;
            die("epoll_wait");
        }
        for (int k = 0; k < r; ++k) {
            const int i = (int)evs[k].data.u32;
            struct msg m;
            ssize_t got = read(fds[i], &m, sizeof m);
            if (got < 0 && errno == EAGAIN) continue;
            if (got == 0 && done[i]) { /* it reported and left */
                epoll_ctl(ep, EPOLL_CTL_DEL, fds[i], NULL);
                continue;
            }
            if (got != (ssize_t)sizeof m) {
                fprintf(stderr, "wake_floor: receiver %d: short read or closed\n", i);
                return 1;
            }
            if (m.type == MSG_EVENT) {
                for (int j = 0; j < n; ++j) write_msg(fds[j], &m);
                ++relayed;
            } else if (m.type == MSG_RESULT) {
                med[i] = m.a;
                p90[i] = m.b;
                done[i] = 1;
                ++results;
            }
        }
    }
    int failed = 0;
    for (int i = 0; i < n; ++i) {
        int st = 0;
        if (waitpid(pids[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) failed = 1;
    }
    if (failed || relayed != events) {
        fprintf(stderr, "wake_floor: a receiver failed (%zu of %zu events relayed)\n", relayed,
                events);
        return 1;
    }
    printf("RESULT floor_median %llu\n", (unsigned long long)pct(med, (size_t)n, 0.5));
    printf("RESULT floor_p90 %llu\n", (unsigned long long)pct(p90, (size_t)n, 0.5));
    printf("INFO %d receivers, %zu events each, gap %ld us\n", n, events, gap_us);
    free(med);
    free(p90);
    free(done);
    free(fds);
    free(pids);
    return 0;
}
