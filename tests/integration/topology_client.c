/* PMIx_Load_topology, PMIx_Get_cpuset, PMIx_Parse_cpuset_string,
 * PMIx_Get_relative_locality and the PMIX_CPUSET / PMIX_LOCALITY_STRING
 * pmixrun gives each process, checked against hwloc itself.
 * usage: topology_client none|core   (pmixrun's --bind-to)
 *        topology_client shared NPUS (pmixrun runs with HWLOC_SYNTHETIC giving NPUS
 *        PUs; the client, without it, must still see them: the server's topology;
 *        with TOPOLOGY_CLIENT_EXPECT_NO_FABRIC set, by a host without a fabric
 *        upcall, PMIx_Fabric_register must be PMIX_ERR_NOT_SUPPORTED) */
#include <hwloc.h>
#include <pmix.h>
#include <pmix_server.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define EXPECT(cond, ...)                  \
    do {                                   \
        if (!(cond)) {                     \
            fprintf(stderr, "topology: "); \
            fprintf(stderr, __VA_ARGS__);  \
            fprintf(stderr, "\n");         \
            ++failures;                    \
        }                                  \
    } while (0)

static char *get_string(const pmix_proc_t *p, const char *key) {
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(p, key, NULL, 0, &val);
    EXPECT(rc == PMIX_SUCCESS, "Get %s of rank %u: %s", key, p->rank, PMIx_Error_string(rc));
    if (rc != PMIX_SUCCESS) return NULL;
    char *s = NULL;
    if (val->type == PMIX_STRING && val->data.string != NULL) s = strdup(val->data.string);
    EXPECT(s != NULL, "%s is not a string", key);
    PMIX_VALUE_RELEASE(val);
    return s;
}

/* What hwloc says two cpusets share, as PMIX_LOCALITY_SHARE_* bits. */
static pmix_locality_t shared_by(hwloc_topology_t topo, hwloc_const_bitmap_t a,
                                 hwloc_const_bitmap_t b) {
    static const struct {
        hwloc_obj_type_t type;
        pmix_locality_t bit;
    } levels[] = {{HWLOC_OBJ_NUMANODE, PMIX_LOCALITY_SHARE_NUMA},
                  {HWLOC_OBJ_PACKAGE, PMIX_LOCALITY_SHARE_PACKAGE},
                  {HWLOC_OBJ_L3CACHE, PMIX_LOCALITY_SHARE_L3CACHE},
                  {HWLOC_OBJ_L2CACHE, PMIX_LOCALITY_SHARE_L2CACHE},
                  {HWLOC_OBJ_L1CACHE, PMIX_LOCALITY_SHARE_L1CACHE},
                  {HWLOC_OBJ_CORE, PMIX_LOCALITY_SHARE_CORE},
                  {HWLOC_OBJ_PU, PMIX_LOCALITY_SHARE_HWTHREAD}};
    pmix_locality_t result = PMIX_LOCALITY_SHARE_NODE;
    for (size_t l = 0; l < sizeof levels / sizeof levels[0]; ++l) {
        int n = hwloc_get_nbobjs_by_type(topo, levels[l].type);
        for (int i = 0; i < n; ++i) {
            hwloc_obj_t obj = hwloc_get_obj_by_type(topo, levels[l].type, (unsigned)i);
            if (obj->cpuset != NULL && hwloc_bitmap_intersects(obj->cpuset, a) &&
                hwloc_bitmap_intersects(obj->cpuset, b))
                result |= levels[l].bit;
        }
    }
    return result;
}

/* The topology a client loads is the one its server shared. */
static int shared(const pmix_proc_t *me, int npus) {
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me->nspace, PMIX_RANK_WILDCARD);
    char *file = get_string(&wild, PMIX_TOPOLOGY_FILE);
    pmix_topology_t topo = PMIX_TOPOLOGY_STATIC_INIT;
    pmix_status_t rc = PMIx_Load_topology(&topo);
    EXPECT(rc == PMIX_SUCCESS, "Load_topology: %s", PMIx_Error_string(rc));
    if (rc == PMIX_SUCCESS) {
        int n = hwloc_get_nbobjs_by_type((hwloc_topology_t)topo.topology, HWLOC_OBJ_PU);
        EXPECT(n == npus, "%d PUs, the server's topology has %d", n, npus);
        EXPECT(hwloc_topology_is_thissystem((hwloc_topology_t)topo.topology),
               "the shared topology is not marked as this system's");
    }
    if (getenv("TOPOLOGY_CLIENT_EXPECT_NO_FABRIC") != NULL) {
        /* Under a host without a fabric upcall (topology_host): the request
         * reaches the server, which says the host does not support it. */
        pmix_fabric_t fabric = PMIX_FABRIC_STATIC_INIT;
        rc = PMIx_Fabric_register(&fabric, NULL, 0);
        EXPECT(rc == PMIX_ERR_NOT_SUPPORTED && fabric.info == NULL,
               "Fabric_register without a host upcall: %s", PMIx_Error_string(rc));
    }
    if (failures == 0) printf("topology ok: rank %u shared %s\n", me->rank, file);
    fflush(stdout);
    free(file);
    PMIx_Topology_destruct(&topo);
    PMIx_Finalize(NULL, 0);
    return failures ? 1 : 0;
}

int main(int argc, char **argv) {
    const int bound = argc > 1 && strcmp(argv[1], "core") == 0;
    const int npus = argc > 2 && strcmp(argv[1], "shared") == 0 ? atoi(argv[2]) : 0;
    if (npus > 0) unsetenv("HWLOC_SYNTHETIC"); /* our own discovery would see the machine */
    pmix_proc_t me, peer, wild;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "topology: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (npus > 0) return shared(&me, npus);
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    uint32_t size = 1;
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val) == PMIX_SUCCESS) {
        size = val->data.uint32;
        PMIX_VALUE_RELEASE(val);
    }
    PMIX_LOAD_PROCID(&peer, me.nspace, (me.rank + 1) % size);

    /* The topology: loaded once, read-only, survives a destruct of a copy. */
    pmix_topology_t topo = PMIX_TOPOLOGY_STATIC_INIT, again = PMIX_TOPOLOGY_STATIC_INIT;
    rc = PMIx_Load_topology(&topo);
    EXPECT(rc == PMIX_SUCCESS, "Load_topology: %s", PMIx_Error_string(rc));
    if (rc != PMIX_SUCCESS) return 1;
    EXPECT(topo.source != NULL && strcmp(topo.source, "hwloc") == 0, "source %s", topo.source);
    hwloc_topology_t htopo = (hwloc_topology_t)topo.topology;
    EXPECT(hwloc_get_nbobjs_by_type(htopo, HWLOC_OBJ_PU) > 0, "topology has no PU");
    again.source = strdup("HWLOC");
    rc = PMIx_Load_topology(&again);
    EXPECT(rc == PMIX_SUCCESS && again.topology == topo.topology,
           "second load: %s, same topology: %d", PMIx_Error_string(rc),
           again.topology == topo.topology);
    PMIx_Topology_destruct(&again); /* must leave the library's topology alone */
    EXPECT(hwloc_get_nbobjs_by_type(htopo, HWLOC_OBJ_PU) > 0, "topology gone after destruct");
    pmix_topology_t other = PMIX_TOPOLOGY_STATIC_INIT;
    other.source = strdup("netloc");
    rc = PMIx_Load_topology(&other);
    EXPECT(rc == PMIX_ERR_NOT_SUPPORTED, "source netloc: %s", PMIx_Error_string(rc));
    PMIx_Topology_destruct(&other);

    /* Our binding, as the OS says and as pmixrun said. */
    pmix_cpuset_t actual = PMIX_CPUSET_STATIC_INIT, told = PMIX_CPUSET_STATIC_INIT,
                  peer_told = PMIX_CPUSET_STATIC_INIT, bad = PMIX_CPUSET_STATIC_INIT;
    rc = PMIx_Get_cpuset(&actual, PMIX_CPUBIND_PROCESS);
    EXPECT(rc == PMIX_SUCCESS, "Get_cpuset(PROCESS): %s", PMIx_Error_string(rc));
    pmix_cpuset_t thread = PMIX_CPUSET_STATIC_INIT;
    rc = PMIx_Get_cpuset(&thread, PMIX_CPUBIND_THREAD);
    EXPECT(rc == PMIX_SUCCESS && hwloc_bitmap_isequal(thread.bitmap, actual.bitmap),
           "Get_cpuset(THREAD): %s", PMIx_Error_string(rc));
    PMIx_Cpuset_destruct(&thread);
    EXPECT(PMIx_Get_cpuset(&bad, 99) == PMIX_ERR_BAD_PARAM, "Get_cpuset(99) accepted");
    char *mine = get_string(&me, PMIX_CPUSET);
    char *peers = get_string(&peer, PMIX_CPUSET);
    char *my_loc = get_string(&me, PMIX_LOCALITY_STRING);
    char *peer_loc = get_string(&peer, PMIX_LOCALITY_STRING);
    if (mine == NULL || peers == NULL || my_loc == NULL || peer_loc == NULL) return 1;
    rc = PMIx_Parse_cpuset_string(mine, &told);
    EXPECT(rc == PMIX_SUCCESS, "Parse_cpuset_string(%s): %s", mine, PMIx_Error_string(rc));
    rc = PMIx_Parse_cpuset_string(peers, &peer_told);
    EXPECT(rc == PMIX_SUCCESS, "Parse_cpuset_string(%s): %s", peers, PMIx_Error_string(rc));
    if (failures) return 1;
    EXPECT(hwloc_bitmap_isequal(told.bitmap, actual.bitmap), "PMIX_CPUSET %s is not where we run",
           mine);
    if (bound) {
        int ncores = hwloc_get_nbobjs_by_type(htopo, HWLOC_OBJ_CORE);
        hwloc_obj_t core = hwloc_get_obj_by_type(htopo, HWLOC_OBJ_CORE, me.rank % (unsigned)ncores);
        EXPECT(hwloc_bitmap_isequal(core->cpuset, actual.bitmap), "rank %u not bound to core %u",
               me.rank, me.rank % (unsigned)ncores);
    }

    /* The cpuset string round-trips (a host may give a bare list, as ORTE does:
     * ours is then that list with the "hwloc:" prefix). */
    const char *colon = strchr(mine, ':');
    const char *list = colon != NULL ? colon + 1 : mine;
    char *back = NULL;
    rc = PMIx_server_generate_cpuset_string(&told, &back);
    EXPECT(rc == PMIX_SUCCESS && back != NULL && strncmp(back, "hwloc:", 6) == 0 &&
               strcmp(back + 6, list) == 0,
           "round trip of %s gave %s (%s)", mine, back ? back : "(null)", PMIx_Error_string(rc));
    free(back);
    pmix_cpuset_t bare = PMIX_CPUSET_STATIC_INIT;
    EXPECT(PMIx_Parse_cpuset_string(list, &bare) == PMIX_SUCCESS &&
               hwloc_bitmap_isequal(bare.bitmap, told.bitmap),
           "a bare list is not the same cpuset");
    PMIx_Cpuset_destruct(&bare);
    EXPECT(PMIx_Parse_cpuset_string("hwloc:zero", &bad) == PMIX_ERR_BAD_PARAM,
           "hwloc:zero accepted");
    EXPECT(PMIx_Parse_cpuset_string("netloc:0-1", &bad) == PMIX_ERR_NOT_SUPPORTED,
           "netloc:0-1 accepted");

    /* Our locality string is the server's for where we run. */
    char *loc_here = NULL;
    rc = PMIx_server_generate_locality_string(&actual, &loc_here);
    EXPECT(rc == PMIX_SUCCESS && loc_here != NULL && strcmp(loc_here, my_loc) == 0,
           "locality %s, computed here %s", my_loc, loc_here ? loc_here : "(null)");
    free(loc_here);

    /* The relative locality of the peer is what hwloc says. */
    pmix_locality_t rel = 0;
    rc = PMIx_Get_relative_locality(my_loc, peer_loc, &rel);
    EXPECT(rc == PMIX_SUCCESS, "Get_relative_locality: %s", PMIx_Error_string(rc));
    const pmix_locality_t expected = shared_by(htopo, told.bitmap, peer_told.bitmap);
    EXPECT(rel == expected, "locality with rank %u: 0x%x, hwloc says 0x%x (%s vs %s)", peer.rank,
           (unsigned)rel, (unsigned)expected, my_loc, peer_loc);
    EXPECT(PMIx_Get_relative_locality(my_loc, "XX0:CR0", &rel) == PMIX_ERR_BAD_PARAM,
           "unknown tag accepted");
    EXPECT(PMIx_Get_relative_locality(my_loc, "CRx", &rel) == PMIX_ERR_BAD_PARAM,
           "bad list accepted");
    EXPECT(PMIx_Get_relative_locality(NULL, my_loc, &rel) == PMIX_ERR_BAD_PARAM, "NULL accepted");
    /* Fixed strings: same package and L3, different L2/L1/core/PU. */
    rc = PMIx_Get_relative_locality("NM0:SK0:L30:L20:L10:CR0:HT0", "NM0:SK0:L30:L21:L11:CR1:HT2",
                                    &rel);
    EXPECT(rc == PMIX_SUCCESS && rel == (PMIX_LOCALITY_SHARE_NODE | PMIX_LOCALITY_SHARE_NUMA |
                                         PMIX_LOCALITY_SHARE_PACKAGE | PMIX_LOCALITY_SHARE_L3CACHE),
           "fixed strings: 0x%x", (unsigned)rel);

    if (failures == 0)
        printf("topology ok: rank %u cpus %s locality %s; with rank %u 0x%x\n", me.rank, mine,
               my_loc, peer.rank, (unsigned)expected);
    fflush(stdout);
    PMIx_Cpuset_destruct(&actual);
    PMIx_Cpuset_destruct(&told);
    PMIx_Cpuset_destruct(&peer_told);
    free(mine);
    free(peers);
    free(my_loc);
    free(peer_loc);
    PMIx_Topology_destruct(&topo);
    rc = PMIx_Finalize(NULL, 0);
    EXPECT(rc == PMIX_SUCCESS, "Finalize: %s", PMIx_Error_string(rc));
    return failures ? 1 : 0;
}
