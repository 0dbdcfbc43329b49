/* A client (PMIx_Init) and a tool (PMIx_tool_init) facing the same broken
 * server get the same status, within the connect timeout
 * (framework/client/README.md, "The connector"). This program plays the
 * server on a usock path, then runs PMIx_Init and PMIx_tool_init each in its
 * own child against it, with PMIX_MCA_ptl_base_connect_timeout=1.
 *
 * usage: handshake_peer MODE
 *   full     the accept queue is full and nothing is accepted: PMIX_ERR_TIMEOUT
 *   silent   connections are accepted and never answered: PMIX_ERR_TIMEOUT
 *   garbage  the answer is a frame header of a wrong version: PMIX_ERR_UNPACK_FAILURE
 *   badbody  the answer is a well-framed reply whose body does not parse:
 *            PMIX_ERR_UNPACK_FAILURE
 * Prints "handshake_peer MODE ok" when both got the expected status in time.
 * Before the connector, `full` gave PMIx_Init PMIX_ERR_UNREACH (the tool
 * TIMEOUT) and `garbage` gave both PMIX_ERR_LOST_CONNECTION; `silent` and
 * `badbody` pin what both already did. */
#include <pmix.h>
#include <pmix_tool.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int listen_at(const char *path, int backlog) {
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, backlog) != 0) {
        perror("handshake_peer: listen");
        exit(2);
    }
    if (backlog == 0) { /* fill the queue (one pending connection) ourselves */
        int filler = socket(AF_UNIX, SOCK_STREAM, 0);
        if (filler < 0 || connect(filler, (struct sockaddr *)&a, sizeof a) != 0) {
            perror("handshake_peer: filler");
            exit(2);
        }
    }
    return fd;
}

/* The broken server: runs until killed. */
static void serve(int lfd, const char *mode) {
    if (strcmp(mode, "full") == 0) {
        for (;;) pause();
    }
    for (;;) {
        int c = accept(lfd, NULL, NULL);
        if (c < 0) {
            if (errno == EINTR) continue;
            _exit(2);
        }
        /* Take the handshake (whatever arrives within a moment). */
        unsigned char buf[4096];
        ssize_t got = 0;
        struct pollfd p = {c, POLLIN, 0};
        if (poll(&p, 1, 2000) > 0) got = read(c, buf, sizeof buf);
        if (strcmp(mode, "garbage") == 0) {
            unsigned char bad[12];
            memset(bad, 0xab, sizeof bad);
            (void)write(c, bad, sizeof bad);
        } else if (strcmp(mode, "badbody") == 0) {
            /* version 1, flags reply, command handshake, the request's tag
             * (header bytes 4-7), 3 body bytes that are no status */
            unsigned char reply[15] = {1, 2, 1, 0, 0, 0, 0, 0, 3, 0, 0, 0, 1, 2, 3};
            if (got >= 8) memcpy(reply + 4, buf + 4, 4);
            (void)write(c, reply, sizeof reply);
        }
        /* silent, and after the answers: keep the connection open, say nothing */
    }
}

/* Runs one init in a child; returns its status (the child's exit code
 * carries the status's distance below 0) and the elapsed seconds. */
static int run_child(int tool, const char *uri, double *elapsed) {
    const double start = now_s();
    pid_t pid = fork();
    if (pid == 0) {
        pmix_status_t rc;
        if (tool) {
            pmix_info_t info;
            PMIX_INFO_LOAD(&info, PMIX_SERVER_URI, uri, PMIX_STRING);
            pmix_proc_t me;
            rc = PMIx_tool_init(&me, &info, 1);
        } else {
            char env[600];
            snprintf(env, sizeof env, "peer.0;%s", uri);
            setenv("PMIX_NAMESPACE", "peer", 1);
            setenv("PMIX_RANK", "0", 1);
            setenv("PMIX_SERVER_URI41", env, 1);
            pmix_proc_t me;
            rc = PMIx_Init(&me, NULL, 0);
        }
        _exit(rc >= 0 || rc < -255 ? 255 : -rc);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return 1;
    *elapsed = now_s() - start;
    return -WEXITSTATUS(st);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: handshake_peer full|silent|garbage|badbody\n");
        return 2;
    }
    const char *mode = argv[1];
    pmix_status_t expected;
    if (strcmp(mode, "full") == 0 || strcmp(mode, "silent") == 0) {
        expected = PMIX_ERR_TIMEOUT;
    } else if (strcmp(mode, "garbage") == 0 || strcmp(mode, "badbody") == 0) {
        expected = PMIX_ERR_UNPACK_FAILURE;
    } else {
        fprintf(stderr, "handshake_peer: unknown mode %s\n", mode);
        return 2;
    }
    /* Ours only: nothing from a surrounding job or server. */
    unsetenv("PMIXPP_SERVER_URIS");
    unsetenv("PMIX_SERVER_URI4");
    unsetenv("PMIX_SERVER_URI3");
    unsetenv("PMIX_SERVER_URI21");
    unsetenv("PMIX_SERVER_URI2");
    setenv("PMIX_MCA_ptl_base_connect_timeout", "1", 1);

    char dir[] = "/tmp/handshake_peer.XXXXXX";
    if (mkdtemp(dir) == NULL) {
        perror("handshake_peer: mkdtemp");
        return 2;
    }
    char path[256], uri[300];
    snprintf(path, sizeof path, "%s/s", dir);
    snprintf(uri, sizeof uri, "usock://%s", path);
    const int lfd = listen_at(path, strcmp(mode, "full") == 0 ? 0 : 16);
    pid_t server = fork();
    if (server == 0) serve(lfd, mode);

    int failed = 0;
    for (int tool = 0; tool <= 1; ++tool) {
        double elapsed = 0;
        const pmix_status_t rc = run_child(tool, uri, &elapsed);
        const char *who = tool ? "PMIx_tool_init" : "PMIx_Init";
        /* The elapsed time is printed for the reader, not judged (tests do
         * not assert on time): the status is what both paths must agree on. */
        printf("%s: %s (%d) after %.2f s\n", who, PMIx_Error_string(rc), rc, elapsed);
        if (rc != expected) {
            printf("FAIL %s: expected %s\n", who, PMIx_Error_string(expected));
            failed = 1;
        }
    }
    kill(server, SIGKILL);
    waitpid(server, NULL, 0);
    unlink(path);
    rmdir(dir);
    if (!failed) printf("handshake_peer %s ok\n", mode);
    return failed;
}
