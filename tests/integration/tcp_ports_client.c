/* Under pmixrun --tcp-ports N: each process has N ports (pnet_tcp) and its
 * job's key in its environment; the processes exchange them (Put, Fence, Get)
 * and check that their ports are disjoint, inside the pool, and that the key
 * is the same. Then, without any Put, every rank's PMIX_FABRIC_ENDPT (the
 * ports reserved for the whole job at set-up) must be the N ports that rank
 * has in its environment, on an address of this machine's interface it names,
 * and the job's PMIX_ALLOC_FABRIC_SEC_KEY the key.
 * usage: tcp_ports_client N FIRST LAST */
#include <pmix.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>

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

/* Whether this machine's interface `name` has the address `addr`. */
static int has_address(const char *name, const char *addr) {
    struct ifaddrs *list = NULL, *a;
    int found = 0;
    if (getifaddrs(&list) != 0) return 0;
    for (a = list; a != NULL && !found; a = a->ifa_next) {
        if (a->ifa_addr == NULL || strcmp(a->ifa_name, name) != 0) continue;
        char text[INET6_ADDRSTRLEN] = "";
        if (a->ifa_addr->sa_family == AF_INET)
            inet_ntop(AF_INET, &((struct sockaddr_in *)a->ifa_addr)->sin_addr, text, sizeof text);
        else if (a->ifa_addr->sa_family == AF_INET6)
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)a->ifa_addr)->sin6_addr, text,
                      sizeof text);
        found = strcmp(text, addr) == 0;
    }
    freeifaddrs(list);
    return found;
}

/* Rank r's PMIX_FABRIC_ENDPT: n endpoints, the k-th "<address>:<port + k>". */
static void check_endpoints(const pmix_proc_t *who, int n, int port) {
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(who, PMIX_FABRIC_ENDPT, NULL, 0, &val);
    CHECK(rc == PMIX_SUCCESS, "Get PMIX_FABRIC_ENDPT of %u: %s", who->rank, PMIx_Error_string(rc));
    CHECK(val->type == PMIX_DATA_ARRAY && val->data.darray->type == PMIX_ENDPOINT &&
              val->data.darray->size == (size_t)n,
          "rank %u: PMIX_FABRIC_ENDPT is not %d pmix_endpoint_t", who->rank, n);
    const pmix_endpoint_t *e = val->data.darray->array;
    for (int k = 0; k < n; ++k) {
        char text[128] = "";
        CHECK(e[k].endpt.size > 0 && e[k].endpt.size < sizeof text, "rank %u: endpoint %d size",
              who->rank, k);
        memcpy(text, e[k].endpt.bytes, e[k].endpt.size);
        char *colon = strrchr(text, ':');
        CHECK(colon != NULL && atoi(colon + 1) == port + k, "rank %u: endpoint %d is '%s', port %d",
              who->rank, k, text, port + k);
        *colon = '\0';
        const char *addr = text;
        if (text[0] == '[') {
            addr = text + 1;
            text[strlen(text) - 1] = '\0';
        }
        CHECK(e[k].uuid != NULL, "rank %u: endpoint without uuid", who->rank);
        if (e[k].osname != NULL) {
            CHECK(has_address(e[k].osname, addr), "rank %u: %s has no address %s", who->rank,
                  e[k].osname, addr);
            CHECK(strstr(e[k].uuid, e[k].osname) != NULL, "rank %u: uuid %s, osname %s", who->rank,
                  e[k].uuid, e[k].osname);
        }
    }
    PMIX_VALUE_RELEASE(val);
}

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
    CHECK(PMIx_Get(&wild, PMIX_ALLOC_FABRIC_SEC_KEY, NULL, 0, &val) == PMIX_SUCCESS,
          "Get PMIX_ALLOC_FABRIC_SEC_KEY");
    CHECK(val->type == PMIX_BYTE_OBJECT && val->data.bo.size == strlen(key) &&
              memcmp(val->data.bo.bytes, key, strlen(key)) == 0,
          "PMIX_ALLOC_FABRIC_SEC_KEY is not the key of the environment");
    PMIX_VALUE_RELEASE(val);
    check_endpoints(&me, n, port);
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
        check_endpoints(&peer, n, theirs);
        CHECK(PMIx_Get(&peer, "tcp.key", NULL, 0, &val) == PMIX_SUCCESS, "Get key of %u", r);
        CHECK(strcmp(val->data.string, key) == 0, "rank %u has another key", r);
        PMIX_VALUE_RELEASE(val);
    }
    printf("tcp ports ok: rank %u ports %d-%d\n", me.rank, port, port + n - 1);
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}
