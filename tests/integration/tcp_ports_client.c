/* Under pmixrun --tcp-ports N: each process has N ports (pnet_tcp) and its
 * job's key in its environment; the processes exchange them (Put, Fence, Get)
 * and check that their ports are disjoint, inside the pool, and that the key
 * is the same. usage: tcp_ports_client N FIRST LAST */
#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...)                    \
    do {                                    \
        if (!(cond)) {                      \
            fprintf(stderr, "tcp_ports: "); \
            fprintf(stderr, __VA_ARGS__);   \
            fprintf(stderr, "\n");          \
            exit(1);                        \
        }                                   \
    } while (0)

int main(int argc, char **argv) {
    CHECK(argc == 4, "usage: tcp_ports_client N FIRST LAST");
    const int n = atoi(argv[1]), first = atoi(argv[2]), last = atoi(argv[3]);
    pmix_proc_t me, wild;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "Init: %s", PMIx_Error_string(rc));
    const char *port_s = getenv("OMPI_MCA_btl_tcp_port_min_v4");
    const char *range_s = getenv("OMPI_MCA_btl_tcp_port_range_v4");
    const char *key = getenv("PMIX_FABRIC_SEC_KEY");
    CHECK(port_s != NULL && range_s != NULL && key != NULL, "rank %u: no ports or key", me.rank);
    const int port = atoi(port_s), range = atoi(range_s);
    CHECK(range == n && port >= first && port + range - 1 <= last,
          "rank %u: ports %d+%d, want %d in %d-%d", me.rank, port, range, n, first, last);

    pmix_value_t v;
    v.type = PMIX_INT;
    v.data.integer = port;
    CHECK(PMIx_Put(PMIX_LOCAL, "tcp.port", &v) == PMIX_SUCCESS, "Put port");
    v.type = PMIX_STRING;
    v.data.string = (char *)key;
    CHECK(PMIx_Put(PMIX_LOCAL, "tcp.key", &v) == PMIX_SUCCESS, "Put key");
    CHECK(PMIx_Commit() == PMIX_SUCCESS, "Commit");
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    bool collect = true;
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    rc = PMIx_Fence(&wild, 1, &info, 1);
    CHECK(rc == PMIX_SUCCESS, "Fence: %s", PMIx_Error_string(rc));

    pmix_value_t *val = NULL;
    CHECK(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val) == PMIX_SUCCESS, "Get job size");
    const uint32_t size = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    for (uint32_t r = 0; r < size; ++r) {
        if (r == me.rank) continue;
        pmix_proc_t peer;
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        CHECK(PMIx_Get(&peer, "tcp.port", NULL, 0, &val) == PMIX_SUCCESS, "Get port of %u", r);
        const int theirs = val->data.integer;
        PMIX_VALUE_RELEASE(val);
        CHECK(theirs + n <= port || port + n <= theirs,
              "rank %u ports %d, rank %u ports %d overlap", me.rank, port, r, theirs);
        CHECK(PMIx_Get(&peer, "tcp.key", NULL, 0, &val) == PMIX_SUCCESS, "Get key of %u", r);
        CHECK(strcmp(val->data.string, key) == 0, "rank %u has another key", r);
        PMIX_VALUE_RELEASE(val);
    }
    printf("tcp ports ok: rank %u ports %d-%d\n", me.rank, port, port + n - 1);
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}
