/* PMIx_Compute_distances(_nb) and PMIx_Get of PMIX_DEVICE_DISTANCES,
 * checked against hwloc itself (docs/network.md, "Device distances").
 * usage: distances_client xml FILE  (no server needed: a made-up node,
 *          tests/integration/data/two_packages_with_nics.xml)
 *        distances_client real      (under pmixrun: this machine's devices,
 *          from the process's own PMIX_CPUSET, and the same through PMIx_Get;
 *          then PMIx_Fabric_register/_update/_deregister, which the library
 *          forwards to pmixrun's fabric upcall: one device per interface of
 *          this machine that is up, not loopback and has an address)
 * The distance of a PU to a device is the number of levels between the PU and
 * the closest object holding both it and the device's locality. */
#include <hwloc.h>
#include <pmix.h>

#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

static void check_forwarded_fabric(void);

#define EXPECT(cond, ...)                   \
    do {                                    \
        if (!(cond)) {                      \
            fprintf(stderr, "distances: "); \
            fprintf(stderr, __VA_ARGS__);   \
            fprintf(stderr, "\n");          \
            ++failures;                     \
        }                                   \
    } while (0)

static const pmix_device_distance_t *find(const pmix_device_distance_t *d, size_t n,
                                          const char *osname) {
    for (size_t i = 0; i < n; ++i)
        if (d[i].osname != NULL && strcmp(d[i].osname, osname) == 0) return &d[i];
    return NULL;
}

static pmix_status_t compute(pmix_topology_t *topo, const char *cpus, pmix_info_t *info,
                             size_t ninfo, pmix_device_distance_t **d, size_t *n) {
    pmix_cpuset_t cpuset;
    memset(&cpuset, 0, sizeof cpuset);
    pmix_status_t rc = PMIx_Parse_cpuset_string(cpus, &cpuset);
    if (rc != PMIX_SUCCESS) return rc;
    rc = PMIx_Compute_distances(topo, &cpuset, info, ninfo, d, n);
    PMIx_Cpuset_destruct(&cpuset);
    return rc;
}

static size_t nb_count;
static int nb_called;
static void on_distances(pmix_status_t status, pmix_device_distance_t *dist, size_t ndist,
                         void *cbdata, pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    (void)cbdata;
    (void)dist;
    nb_called = status == PMIX_SUCCESS ? 1 : -1;
    nb_count = ndist;
    if (release_fn != NULL) release_fn(release_cbdata);
}

static int made_up_node(const char *file) {
    hwloc_topology_t t;
    hwloc_topology_init(&t);
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (hwloc_topology_set_xml(t, file) != 0 || hwloc_topology_load(t) != 0) {
        fprintf(stderr, "distances: cannot load %s\n", file);
        return 1;
    }
    pmix_topology_t topo = {"hwloc", t};
    pmix_device_distance_t *d = NULL;
    size_t n = 0;
    pmix_device_type_t net = PMIX_DEVTYPE_NETWORK;
    pmix_info_t type;
    PMIX_INFO_LOAD(&type, PMIX_DEVICE_TYPE, &net, PMIX_DEVTYPE);

    /* Package 0's PUs: eth0 (on package 0) is nearer than eth1 (package 1). */
    pmix_status_t rc = compute(&topo, "hwloc:0-1", &type, 1, &d, &n);
    EXPECT(rc == PMIX_SUCCESS && n == 2, "network devices from PUs 0-1: %s, %zu",
           PMIx_Error_string(rc), n);
    const pmix_device_distance_t *e0 = find(d, n, "eth0"), *e1 = find(d, n, "eth1");
    EXPECT(e0 != NULL && e1 != NULL, "eth0 and eth1 expected");
    if (e0 != NULL && e1 != NULL) {
        /* PU depth 3, package depth 1, machine depth 0 */
        EXPECT(e0->mindist == 2 && e0->maxdist == 2, "eth0 from package 0: %u-%u", e0->mindist,
               e0->maxdist);
        EXPECT(e1->mindist == 3 && e1->maxdist == 3, "eth1 from package 0: %u-%u", e1->mindist,
               e1->maxdist);
        EXPECT(e0->type == PMIX_DEVTYPE_NETWORK && e0->uuid != NULL &&
                   strstr(e0->uuid, "eth0") != NULL,
               "eth0's type/uuid");
    }
    PMIX_DEVICE_DIST_FREE(d, n);
    /* Every PU: each NIC is near some PUs and far from others. */
    rc = compute(&topo, "0-3", &type, 1, &d, &n);
    e1 = rc == PMIX_SUCCESS ? find(d, n, "eth1") : NULL;
    EXPECT(e1 != NULL && e1->mindist == 2 && e1->maxdist == 3, "eth1 from PUs 0-3");
    if (rc == PMIX_SUCCESS) PMIX_DEVICE_DIST_FREE(d, n);
    /* No directive: every device; an OpenFabrics-only request: the HCA only. */
    rc = compute(&topo, "hwloc:2", NULL, 0, &d, &n);
    EXPECT(
        rc == PMIX_SUCCESS && n == 4 && find(d, n, "vda") != NULL && find(d, n, "mlx5_0") != NULL,
        "every device from PU 2: %s, %zu", PMIx_Error_string(rc), n);
    if (rc == PMIX_SUCCESS) PMIX_DEVICE_DIST_FREE(d, n);
    pmix_device_type_t ofi = PMIX_DEVTYPE_OPENFABRICS;
    pmix_info_t only_ofi;
    PMIX_INFO_LOAD(&only_ofi, PMIX_DEVICE_TYPE, &ofi, PMIX_DEVTYPE);
    rc = compute(&topo, "hwloc:2", &only_ofi, 1, &d, &n);
    EXPECT(rc == PMIX_SUCCESS && n == 1 && strcmp(d[0].osname, "mlx5_0") == 0 &&
               d[0].type == PMIX_DEVTYPE_OPENFABRICS && d[0].mindist == 2,
           "OpenFabrics from PU 2");
    if (rc == PMIX_SUCCESS) PMIX_DEVICE_DIST_FREE(d, n);
    /* One device by name. */
    pmix_info_t id;
    PMIX_INFO_LOAD(&id, PMIX_DEVICE_ID, "eth1", PMIX_STRING);
    rc = compute(&topo, "hwloc:3", &id, 1, &d, &n);
    EXPECT(rc == PMIX_SUCCESS && n == 1 && strcmp(d[0].osname, "eth1") == 0 && d[0].mindist == 2,
           "eth1 by id from PU 3");
    if (rc == PMIX_SUCCESS) PMIX_DEVICE_DIST_FREE(d, n);
    /* A cpuset this node does not have; a malformed directive. */
    rc = compute(&topo, "hwloc:9", NULL, 0, &d, &n);
    EXPECT(rc == PMIX_ERR_BAD_PARAM, "PU 9: %s", PMIx_Error_string(rc));
    pmix_info_t bad;
    PMIX_INFO_LOAD(&bad, PMIX_DEVICE_TYPE, "network", PMIX_STRING);
    rc = compute(&topo, "hwloc:0", &bad, 1, &d, &n);
    EXPECT(rc == PMIX_ERR_BAD_PARAM, "a string device type: %s", PMIx_Error_string(rc));
    /* The non-blocking form. */
    pmix_cpuset_t cpuset;
    memset(&cpuset, 0, sizeof cpuset);
    PMIx_Parse_cpuset_string("hwloc:0", &cpuset);
    rc = PMIx_Compute_distances_nb(&topo, &cpuset, &type, 1, on_distances, NULL);
    EXPECT(rc == PMIX_SUCCESS && nb_called == 1 && nb_count == 2, "_nb: %s, called %d, %zu",
           PMIx_Error_string(rc), nb_called, nb_count);
    PMIx_Cpuset_destruct(&cpuset);
    PMIX_INFO_DESTRUCT(&type);
    PMIX_INFO_DESTRUCT(&only_ofi);
    PMIX_INFO_DESTRUCT(&id);
    PMIX_INFO_DESTRUCT(&bad);
    hwloc_topology_destroy(t);
    if (failures != 0) return 1;
    printf("distances ok: made-up node\n");
    return 0;
}

/* This machine, as hwloc sees it with its I/O devices. */
static int real_node(void) {
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "distances: init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_value_t *val = NULL;
    rc = PMIx_Get(&me, PMIX_CPUSET, NULL, 0, &val);
    EXPECT(rc == PMIX_SUCCESS && val->type == PMIX_STRING, "PMIX_CPUSET");
    char *cpus = rc == PMIX_SUCCESS ? strdup(val->data.string) : strdup("0");
    if (rc == PMIX_SUCCESS) PMIX_VALUE_RELEASE(val);

    hwloc_topology_t t;
    hwloc_topology_init(&t);
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    hwloc_topology_load(t);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    hwloc_bitmap_list_sscanf(set, strchr(cpus, ':') != NULL ? strchr(cpus, ':') + 1 : cpus);

    pmix_device_distance_t *d = NULL;
    size_t n = 0;
    rc = compute(NULL, cpus, NULL, 0, &d, &n);
    size_t expected = 0;
    for (hwloc_obj_t o = hwloc_get_next_osdev(t, NULL); o != NULL; o = hwloc_get_next_osdev(t, o)) {
        ++expected;
        const pmix_device_distance_t *mine = rc == PMIX_SUCCESS ? find(d, n, o->name) : NULL;
        EXPECT(mine != NULL, "hwloc's %s is missing", o->name);
        if (mine == NULL) continue;
        hwloc_obj_t where = hwloc_get_non_io_ancestor_obj(t, o);
        unsigned lo = 65535, hi = 0;
        int pu;
        hwloc_bitmap_foreach_begin(pu, set) {
            hwloc_obj_t p = hwloc_get_pu_obj_by_os_index(t, (unsigned)pu);
            if (p == NULL) continue;
            unsigned dist =
                (unsigned)(p->depth - hwloc_get_common_ancestor_obj(t, p, where)->depth);
            if (dist < lo) lo = dist;
            if (dist > hi) hi = dist;
        }
        hwloc_bitmap_foreach_end();
        EXPECT(mine->mindist == lo && mine->maxdist == hi, "%s: %u-%u, hwloc says %u-%u", o->name,
               mine->mindist, mine->maxdist, lo, hi);
    }
    if (expected == 0) {
        EXPECT(rc == PMIX_ERR_NOT_FOUND, "no device here, yet %s", PMIx_Error_string(rc));
    } else {
        EXPECT(rc == PMIX_SUCCESS && n == expected, "%zu devices, hwloc has %zu (%s)", n, expected,
               PMIx_Error_string(rc));
    }
    /* The same through PMIx_Get (derived from the process's PMIX_CPUSET). */
    val = NULL;
    pmix_status_t grc = PMIx_Get(&me, PMIX_DEVICE_DISTANCES, NULL, 0, &val);
    if (expected == 0) {
        EXPECT(grc == PMIX_ERR_NOT_FOUND, "Get with no device: %s", PMIx_Error_string(grc));
    } else {
        EXPECT(grc == PMIX_SUCCESS && val->type == PMIX_DATA_ARRAY &&
                   val->data.darray->type == PMIX_DEVICE_DIST && val->data.darray->size == n,
               "Get PMIX_DEVICE_DISTANCES: %s", PMIx_Error_string(grc));
        if (grc == PMIX_SUCCESS && val->type == PMIX_DATA_ARRAY) {
            const pmix_device_distance_t *g = val->data.darray->array;
            for (size_t i = 0; i < val->data.darray->size && rc == PMIX_SUCCESS; ++i) {
                const pmix_device_distance_t *c = find(d, n, g[i].osname);
                EXPECT(c != NULL && c->mindist == g[i].mindist && c->maxdist == g[i].maxdist &&
                           c->type == g[i].type,
                       "Get's %s differs from Compute_distances'", g[i].osname);
            }
        }
        if (grc == PMIX_SUCCESS) PMIX_VALUE_RELEASE(val);
    }
    if (rc == PMIX_SUCCESS) PMIX_DEVICE_DIST_FREE(d, n);
    check_forwarded_fabric();
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(t);
    free(cpus);
    PMIx_Finalize(NULL, 0);
    if (failures != 0) return 1;
    printf("distances ok: rank %u, %zu devices\n", me.rank, expected);
    return 0;
}

/* The interfaces that are up, not loopback and have an IPv4/IPv6 address. */
static size_t count_interfaces(void) {
    struct ifaddrs *list = NULL, *a;
    char seen[64][IF_NAMESIZE + 1];
    size_t n = 0;
    if (getifaddrs(&list) != 0) return 0;
    for (a = list; a != NULL; a = a->ifa_next) {
        if (a->ifa_addr == NULL || (a->ifa_flags & IFF_UP) == 0 ||
            (a->ifa_flags & IFF_LOOPBACK) != 0)
            continue;
        if (a->ifa_addr->sa_family != AF_INET && a->ifa_addr->sa_family != AF_INET6) continue;
        size_t k = 0;
        while (k < n && strcmp(seen[k], a->ifa_name) != 0) ++k;
        if (k == n && n < 64) snprintf(seen[n++], IF_NAMESIZE + 1, "%s", a->ifa_name);
    }
    freeifaddrs(list);
    return n;
}

static const pmix_info_t *find_info(const pmix_fabric_t *f, const char *key) {
    for (size_t i = 0; i < f->ninfo; ++i)
        if (PMIX_CHECK_KEY(&f->info[i], key)) return &f->info[i];
    return NULL;
}

/* The fabric pmixrun describes for a client (its fabric upcall): this node's
 * devices, a cost matrix (0 on the diagonal, 1 between two devices of one
 * node) given as a pointer; an unknown plane is NOT_FOUND; update and
 * deregister; a second deregister is BAD_PARAM. */
static void check_forwarded_fabric(void) {
    const size_t want = count_interfaces();
    pmix_fabric_t fabric = PMIX_FABRIC_STATIC_INIT;
    pmix_status_t rc = PMIx_Fabric_register(&fabric, NULL, 0);
    EXPECT(rc == PMIX_SUCCESS, "a client's Fabric_register: %s", PMIx_Error_string(rc));
    if (rc != PMIX_SUCCESS) return;
    for (int round = 0; round < 2; ++round) {
        const pmix_info_t *num = find_info(&fabric, PMIX_FABRIC_NUM_DEVICES);
        const pmix_info_t *cm = find_info(&fabric, PMIX_FABRIC_COST_MATRIX);
        EXPECT(num != NULL && num->value.type == PMIX_SIZE && num->value.data.size == want,
               "round %d: PMIX_FABRIC_NUM_DEVICES is not %zu", round, want);
        size_t devices = 0;
        for (size_t i = 0; i < fabric.ninfo; ++i)
            if (PMIX_CHECK_KEY(&fabric.info[i], PMIX_FABRIC_DEVICE)) ++devices;
        EXPECT(devices == want, "round %d: %zu PMIX_FABRIC_DEVICE, want %zu", round, devices, want);
        EXPECT(cm != NULL && cm->value.type == PMIX_POINTER && cm->value.data.ptr != NULL,
               "round %d: PMIX_FABRIC_COST_MATRIX is not a pointer", round);
        if (cm != NULL && cm->value.type == PMIX_POINTER && cm->value.data.ptr != NULL) {
            const uint16_t *c = cm->value.data.ptr;
            for (size_t i = 0; i < want; ++i)
                for (size_t j = 0; j < want; ++j)
                    EXPECT(c[i * want + j] == (i == j ? 0 : 1), "round %d: cost[%zu][%zu] = %u",
                           round, i, j, c[i * want + j]);
        }
        if (round == 0) {
            rc = PMIx_Fabric_update(&fabric);
            EXPECT(rc == PMIX_SUCCESS, "Fabric_update: %s", PMIx_Error_string(rc));
        }
    }
    rc = PMIx_Fabric_deregister(&fabric);
    EXPECT(rc == PMIX_SUCCESS && fabric.info == NULL, "Fabric_deregister: %s",
           PMIx_Error_string(rc));
    rc = PMIx_Fabric_deregister(&fabric);
    EXPECT(rc == PMIX_ERR_BAD_PARAM, "a second Fabric_deregister: %s", PMIx_Error_string(rc));
    pmix_info_t plane;
    PMIX_INFO_LOAD(&plane, PMIX_FABRIC_PLANE, "203.0.113.0/24", PMIX_STRING);
    pmix_fabric_t none = PMIX_FABRIC_STATIC_INIT;
    rc = PMIx_Fabric_register(&none, &plane, 1);
    EXPECT(rc == PMIX_ERR_NOT_FOUND, "a plane this node is not on: %s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&plane);
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "xml") == 0) return made_up_node(argv[2]);
    if (argc == 2 && strcmp(argv[1], "real") == 0) return real_node();
    fprintf(stderr, "usage: distances_client xml FILE | real\n");
    return 2;
}
