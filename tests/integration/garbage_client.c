/* Rank 0 first connects to the server's socket itself and sends garbage (a
 * bad header, then an oversized length); the server must drop that
 * connection and go on serving. Then every rank runs a normal
 * init/put/commit/fence/get. usage: garbage_client */
#include <pmix.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int connect_raw(const char *uri) {
    if (strncmp(uri, "usock://", 8) == 0) {
        struct sockaddr_un a = {0};
        a.sun_family = AF_UNIX;
        socklen_t len = sizeof a;
        if (uri[8] == '@') { /* abstract name: leading NUL, length ends it */
            size_t n = strlen(uri + 9);
            if (n >= sizeof a.sun_path) return -1;
            memcpy(a.sun_path + 1, uri + 9, n);
            len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
        } else {
            snprintf(a.sun_path, sizeof a.sun_path, "%s", uri + 8);
        }
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        return connect(fd, (struct sockaddr *)&a, len) == 0 ? fd : -1;
    }
    if (strncmp(uri, "tcp4://", 7) == 0) {
        char host[64];
        snprintf(host, sizeof host, "%s", uri + 7);
        char *colon = strrchr(host, ':');
        if (colon == NULL) return -1;
        *colon = '\0';
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_port = htons((unsigned short)atoi(colon + 1));
        inet_pton(AF_INET, host, &a.sin_addr);
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        return connect(fd, (struct sockaddr *)&a, sizeof a) == 0 ? fd : -1;
    }
    return -1;
}

/* Sends `data` and waits (bounded) until the server closes the connection. */
static int dropped_after(const char *uri, const void *data, size_t n) {
    int fd = connect_raw(uri);
    if (fd < 0) return 0;
    if (write(fd, data, n) != (ssize_t)n) return 0;
    struct pollfd p = {fd, POLLIN, 0};
    char buf[256];
    int closed = 0;
    for (int i = 0; i < 100 && !closed; ++i) {
        if (poll(&p, 1, 100) > 0 && read(fd, buf, sizeof buf) <= 0) closed = 1;
    }
    close(fd);
    return closed;
}

int main(void) {
    const char *rank = getenv("PMIX_RANK");
    if (rank != NULL && strcmp(rank, "0") == 0) {
        char uris[1024];
        snprintf(uris, sizeof uris, "%s", getenv("PMIXPP_SERVER_URIS"));
        char *comma = strchr(uris, ',');
        if (comma) *comma = '\0';
        unsigned char junk[64];
        memset(junk, 0xff, sizeof junk);
        unsigned char huge[12] = {1, 0, 6, 0, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f};
        if (!dropped_after(uris, junk, sizeof junk) || !dropped_after(uris, huge, sizeof huge)) {
            fprintf(stderr, "garbage: the server kept a garbage connection open\n");
            return 1;
        }
    }
    pmix_proc_t me, peer;
    pmix_value_t v, *val = NULL;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 1;
    PMIX_VALUE_LOAD(&v, &me.rank, PMIX_UINT32);
    if (PMIx_Put(PMIX_GLOBAL, "test.rank", &v) != PMIX_SUCCESS || PMIx_Commit() != PMIX_SUCCESS)
        return 1;
    pmix_info_t collect;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    if (PMIx_Fence(NULL, 0, &collect, 1) != PMIX_SUCCESS) return 1;
    PMIX_LOAD_PROCID(&peer, me.nspace, 0);
    if (PMIx_Get(&peer, "test.rank", NULL, 0, &val) != PMIX_SUCCESS || val->data.uint32 != 0)
        return 1;
    PMIX_VALUE_RELEASE(val);
    printf("garbage ok: rank %u\n", me.rank);
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 1;
}
