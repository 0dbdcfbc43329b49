/* What the topology costs a client (docs/network.md, bench/README.md):
 *   init      PMIx_Init (it loads no topology)
 *   load      the first PMIx_Load_topology (pmixrun shares an XML file:
 *             the client loads it instead of discovering the node)
 *   again     a second PMIx_Load_topology (the same object)
 *   discover  hwloc's own discovery of this node, for comparison
 *   devices   the first PMIx_Compute_distances (I/O discovery, once)
 * Each rank prints its figures in microseconds; nothing is asserted.
 * usage: pmixrun -n N topology_bench */
#include <hwloc.h>
#include <pmix.h>

#include <stdio.h>
#include <time.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int main(void) {
    pmix_proc_t me;
    double t0 = now_us();
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    double init = now_us() - t0;
    if (rc != PMIX_SUCCESS) return 1;
    pmix_topology_t topo = PMIX_TOPOLOGY_STATIC_INIT;
    t0 = now_us();
    rc = PMIx_Load_topology(&topo);
    double load = now_us() - t0;
    pmix_topology_t again = PMIX_TOPOLOGY_STATIC_INIT;
    t0 = now_us();
    PMIx_Load_topology(&again);
    double second = now_us() - t0;
    t0 = now_us();
    hwloc_topology_t own;
    hwloc_topology_init(&own);
    hwloc_topology_load(own);
    double discover = now_us() - t0;
    hwloc_topology_destroy(own);
    pmix_cpuset_t cpuset;
    PMIx_Get_cpuset(&cpuset, PMIX_CPUBIND_PROCESS);
    pmix_device_distance_t *d = NULL;
    size_t n = 0;
    t0 = now_us();
    pmix_status_t drc = PMIx_Compute_distances(NULL, &cpuset, NULL, 0, &d, &n);
    double devices = now_us() - t0;
    if (drc == PMIX_SUCCESS) PMIX_DEVICE_DIST_FREE(d, n);
    PMIx_Cpuset_destruct(&cpuset);
    printf(
        "topology bench rank %u: init %.0f us, load %.0f us (%s), again %.1f us, "
        "discover %.0f us, devices %.0f us (%zu)\n",
        me.rank, init, load, PMIx_Error_string(rc), second, discover, devices, n);
    PMIx_Topology_destruct(&topo);
    PMIx_Topology_destruct(&again);
    PMIx_Finalize(NULL, 0);
    return 0;
}
