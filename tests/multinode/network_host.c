/* network_host: two servers, one per "node" (two processes of this machine
 * joined by a socketpair, as two daemons of a resource manager would be), for
 * what the network area carries between nodes (docs/network.md):
 *   inventory  node0's PMIx_server_collect_inventory (named "node0"), checked
 *              against what this machine has (hwloc, getifaddrs, sysfs), packed
 *              with PMIx_Data_pack and sent to node1, whose
 *              PMIx_server_deliver_inventory stores it; a delivery naming no
 *              node is refused (BAD_PARAM). node1's PMIx_Fabric_register
 *              sees its own devices before the delivery and node0's too
 *              after it, with the cost matrix; planes, update, deregister.
 *   launch     node0's PMIx_server_setup_application for a job asking for a
 *              "tcp" fabric; the answer is packed and sent to node1; both
 *              nodes give it to PMIx_server_setup_local_support, then
 *              setup_fork their rank (node0: rank 0, node1: rank 1); node1
 *              sends back its child's key: the job has one key on every node.
 *   endpoints  node1's inventory (named "node1") goes to node0 first; the job
 *              info has the node and proc maps and the plane is an IPv4
 *              network of this machine, so node0 reserves both ranks' ports
 *              and picks each node's interface on the plane; on node1, the
 *              job's data then has PMIX_FABRIC_ENDPT of both ranks: rank 1's
 *              is the port its setup_fork gave (uuid "node1:<if>"), rank 0's
 *              is node0's port (uuid "node0:<if>"), the interface on the plane.
 * Prints "network host ok: ..." from node0 when every check held. Each node
 * is bounded by alarm(); exit 1 on a failed check. */
#include <hwloc.h>
#include <pmix.h>
#include <pmix_server.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int node = -1;
static int failures = 0;

#define EXPECT(cond, ...)                                   \
    do {                                                    \
        if (!(cond)) {                                      \
            fprintf(stderr, "network host node%d: ", node); \
            fprintf(stderr, __VA_ARGS__);                   \
            fprintf(stderr, "\n");                          \
            ++failures;                                     \
        }                                                   \
    } while (0)

static void die(const char *what) {
    fprintf(stderr, "network host node%d: %s\n", node, what);
    exit(1);
}

/* ---- framing: a length, then the bytes ---- */
static void send_bytes(int fd, const void *p, size_t n) {
    uint64_t len = n;
    if (write(fd, &len, sizeof len) != (ssize_t)sizeof len) die("write");
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w <= 0) die("write");
        c += w;
        n -= (size_t)w;
    }
}

static char *recv_bytes(int fd, size_t *n) {
    uint64_t len = 0;
    if (read(fd, &len, sizeof len) != (ssize_t)sizeof len) die("read");
    char *buf = malloc(len + 1);
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, buf + got, len - got);
        if (r <= 0) die("read");
        got += (size_t)r;
    }
    buf[len] = '\0';
    *n = len;
    return buf;
}

/* An info array through PMIx_Data_pack / _unpack, as a host would ship it. */
static void send_infos(int fd, const pmix_info_t *info, size_t n) {
    pmix_data_buffer_t buf;
    PMIX_DATA_BUFFER_CONSTRUCT(&buf);
    if (PMIx_Data_pack(NULL, &buf, &n, 1, PMIX_SIZE) != PMIX_SUCCESS ||
        (n > 0 && PMIx_Data_pack(NULL, &buf, (void *)info, (int32_t)n, PMIX_INFO) != PMIX_SUCCESS))
        die("pack");
    send_bytes(fd, buf.base_ptr, buf.bytes_used);
    PMIX_DATA_BUFFER_DESTRUCT(&buf);
}

static pmix_info_t *recv_infos(int fd, size_t *n) {
    size_t len = 0;
    char *bytes = recv_bytes(fd, &len);
    pmix_data_buffer_t buf;
    PMIX_DATA_BUFFER_CONSTRUCT(&buf);
    PMIX_DATA_BUFFER_LOAD(&buf, bytes, len);
    int32_t one = 1;
    if (PMIx_Data_unpack(NULL, &buf, n, &one, PMIX_SIZE) != PMIX_SUCCESS) die("unpack size");
    pmix_info_t *info = NULL;
    if (*n > 0) {
        PMIX_INFO_CREATE(info, *n);
        int32_t count = (int32_t)*n;
        if (PMIx_Data_unpack(NULL, &buf, info, &count, PMIX_INFO) != PMIX_SUCCESS) die("unpack");
    }
    PMIX_DATA_BUFFER_DESTRUCT(&buf);
    return info;
}

/* ---- waiting for a callback ---- */
static _Atomic int cb_done; /* set last, on the progress thread */
static pmix_status_t cb_status;
static pmix_info_t *cb_info;
static size_t cb_ninfo;

static void wait_cb(void) {
    while (!cb_done) usleep(1000); /* bounded by alarm() */
    cb_done = 0;
}

static void on_inventory(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                         pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    (void)cbdata;
    cb_status = status;
    cb_ninfo = ninfo;
    cb_info = NULL;
    if (ninfo > 0) {
        PMIX_INFO_CREATE(cb_info, ninfo);
        for (size_t i = 0; i < ninfo; ++i) PMIX_INFO_XFER(&cb_info[i], &info[i]);
    }
    if (release_fn != NULL) release_fn(release_cbdata);
    cb_done = 1;
}

static void on_app(pmix_status_t status, pmix_info_t info[], size_t ninfo, void *cbdata,
                   pmix_op_cbfunc_t release, void *release_data) {
    on_inventory(status, info, ninfo, cbdata, NULL, NULL);
    if (release != NULL) release(PMIX_SUCCESS, release_data);
}

static const pmix_info_t *find(const pmix_info_t *info, size_t n, const char *key) {
    for (size_t i = 0; i < n; ++i)
        if (PMIX_CHECK_KEY(&info[i], key)) return &info[i];
    return NULL;
}

static char *sysfs(const char *ifname, const char *file) {
    char path[512];
    snprintf(path, sizeof path, "/sys/class/net/%s/%s", ifname, file);
    FILE *f = fopen(path, "r");
    if (f == NULL) return NULL;
    char line[256] = "";
    char *ok = fgets(line, sizeof line, f);
    fclose(f);
    if (ok == NULL) return NULL;
    line[strcspn(line, "\n")] = '\0';
    return strdup(line);
}

/* The interfaces pnet_tcp must report: up, not loopback, with an IP address. */
static int expected_interfaces(char names[][IF_NAMESIZE], int max) {
    struct ifaddrs *list = NULL, *a;
    int n = 0;
    if (getifaddrs(&list) != 0) return 0;
    for (a = list; a != NULL; a = a->ifa_next) {
        if (a->ifa_addr == NULL || !(a->ifa_flags & IFF_UP) || (a->ifa_flags & IFF_LOOPBACK))
            continue;
        if (a->ifa_addr->sa_family != AF_INET && a->ifa_addr->sa_family != AF_INET6) continue;
        int seen = 0;
        for (int i = 0; i < n; ++i) seen |= strcmp(names[i], a->ifa_name) == 0;
        if (!seen && n < max) snprintf(names[n++], IF_NAMESIZE, "%s", a->ifa_name);
    }
    freeifaddrs(list);
    return n;
}

static void check_inventory(const pmix_info_t *inv, size_t n) {
    const pmix_info_t *host = find(inv, n, PMIX_HOSTNAME);
    EXPECT(host != NULL && host->value.type == PMIX_STRING &&
               strcmp(host->value.data.string, "node0") == 0,
           "PMIX_HOSTNAME is not the node0 the host named");
    /* The topology: its signature and XML say what hwloc says of this machine. */
    hwloc_topology_t t;
    hwloc_topology_init(&t);
    hwloc_topology_load(t);
    char want[64];
    snprintf(want, sizeof want, "HT%d", hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU));
    hwloc_topology_destroy(t);
    const pmix_info_t *sig = find(inv, n, PMIX_TOPOLOGY_SIGNATURE);
    EXPECT(sig != NULL && sig->value.type == PMIX_STRING && strstr(sig->value.data.string, want),
           "PMIX_TOPOLOGY_SIGNATURE '%s' lacks %s",
           sig != NULL && sig->value.type == PMIX_STRING ? sig->value.data.string : "", want);
    const pmix_info_t *xml = find(inv, n, PMIX_HWLOC_XML_V2);
    EXPECT(xml != NULL && xml->value.type == PMIX_STRING, "no PMIX_HWLOC_XML_V2");
    if (xml != NULL && xml->value.type == PMIX_STRING) {
        hwloc_topology_t x;
        hwloc_topology_init(&x);
        EXPECT(hwloc_topology_set_xmlbuffer(x, xml->value.data.string,
                                            (int)strlen(xml->value.data.string) + 1) == 0 &&
                   hwloc_topology_load(x) == 0,
               "PMIX_HWLOC_XML_V2 does not load");
        hwloc_topology_destroy(x);
    }
    /* The NICs: one PMIX_FABRIC_DEVICE per interface, with its sysfs facts. */
    char names[32][IF_NAMESIZE];
    const int nexp = expected_interfaces(names, 32);
    const pmix_info_t *devs = find(inv, n, PMIX_FABRIC_DEVICES);
    EXPECT(devs != NULL && devs->value.type == PMIX_DATA_ARRAY &&
               devs->value.data.darray->type == PMIX_INFO &&
               devs->value.data.darray->size == (size_t)nexp,
           "PMIX_FABRIC_DEVICES: %zu devices, this machine has %d interfaces",
           devs != NULL && devs->value.type == PMIX_DATA_ARRAY ? devs->value.data.darray->size : 0,
           nexp);
    if (devs == NULL || devs->value.type != PMIX_DATA_ARRAY) return;
    const pmix_info_t *dev = devs->value.data.darray->array;
    for (size_t d = 0; d < devs->value.data.darray->size; ++d) {
        EXPECT(PMIX_CHECK_KEY(&dev[d], PMIX_FABRIC_DEVICE) && dev[d].value.type == PMIX_DATA_ARRAY,
               "device %zu is not a PMIX_FABRIC_DEVICE array", d);
        if (dev[d].value.type != PMIX_DATA_ARRAY) continue;
        const pmix_info_t *a = dev[d].value.data.darray->array;
        size_t na = dev[d].value.data.darray->size;
        const pmix_info_t *name = find(a, na, PMIX_FABRIC_DEVICE_NAME);
        EXPECT(name != NULL && name->value.type == PMIX_STRING, "device %zu has no name", d);
        if (name == NULL || name->value.type != PMIX_STRING) continue;
        const char *ifname = name->value.data.string;
        int known = 0;
        for (int i = 0; i < nexp; ++i) known |= strcmp(names[i], ifname) == 0;
        EXPECT(known, "device %s is no up interface with an address", ifname);
        char id[128];
        snprintf(id, sizeof id, "node0:%s", ifname);
        EXPECT(na > 0 && PMIX_CHECK_KEY(&a[0], PMIX_DEVICE_ID) &&
                   strcmp(a[0].value.data.string, id) == 0,
               "%s: the first entry is not PMIX_DEVICE_ID %s", ifname, id);
        for (const char *const *k = (const char *const[]){PMIX_FABRIC_DEVICE_VENDOR,
                                                          PMIX_FABRIC_DEVICE_BUS_TYPE, NULL};
             *k != NULL; ++k)
            EXPECT(find(a, na, *k) != NULL, "%s: no %s", ifname, *k);
        char *mac = sysfs(ifname, "address");
        const pmix_info_t *addr = find(a, na, PMIX_FABRIC_DEVICE_ADDRESS);
        EXPECT(mac == NULL || (addr != NULL && strcmp(addr->value.data.string, mac) == 0),
               "%s: PMIX_FABRIC_DEVICE_ADDRESS is not %s", ifname, mac);
        free(mac);
        char *mtu = sysfs(ifname, "mtu");
        const pmix_info_t *m = find(a, na, PMIX_FABRIC_DEVICE_MTU);
        EXPECT(mtu == NULL || (m != NULL && m->value.type == PMIX_SIZE &&
                               m->value.data.size == strtoull(mtu, NULL, 10)),
               "%s: PMIX_FABRIC_DEVICE_MTU is not %s", ifname, mtu);
        free(mtu);
    }
}

static size_t size_of(const pmix_fabric_t *f, const char *key) {
    const pmix_info_t *i = find(f->info, f->ninfo, key);
    return i != NULL && i->value.type == PMIX_SIZE ? i->value.data.size : (size_t)-1;
}

/* PMIx_Fabric_register on node1: before node0's inventory arrived, this
 * node's devices only; after, node0's too, with a cost matrix. */
static size_t fabric_devices(int check_costs) {
    pmix_fabric_t f;
    memset(&f, 0, sizeof f);
    pmix_status_t rc = PMIx_Fabric_register(&f, NULL, 0);
    EXPECT(rc == PMIX_SUCCESS, "Fabric_register: %s", PMIx_Error_string(rc));
    if (rc != PMIX_SUCCESS) return 0;
    const size_t n = size_of(&f, PMIX_FABRIC_NUM_DEVICES);
    EXPECT(find(f.info, f.ninfo, PMIX_FABRIC_VENDOR) != NULL &&
               find(f.info, f.ninfo, PMIX_FABRIC_IDENTIFIER) != NULL,
           "the fabric has no vendor or identifier");
    const pmix_info_t *cm = find(f.info, f.ninfo, PMIX_FABRIC_COST_MATRIX);
    EXPECT(cm != NULL && cm->value.type == PMIX_POINTER, "no cost matrix");
    size_t ndev = 0, from_node0 = 0;
    const char *host[64] = {0};
    const char *plane = NULL;
    for (size_t i = 0; i < f.ninfo; ++i) {
        if (!PMIX_CHECK_KEY(&f.info[i], PMIX_FABRIC_DEVICE)) continue;
        const pmix_info_t *a = f.info[i].value.data.darray->array;
        size_t na = f.info[i].value.data.darray->size;
        const pmix_info_t *h = find(a, na, PMIX_HOSTNAME);
        const pmix_info_t *idx = find(a, na, PMIX_FABRIC_DEVICE_INDEX);
        EXPECT(h != NULL && idx != NULL && idx->value.data.uint32 == ndev,
               "device %zu: no host or index", ndev);
        if (h != NULL && ndev < 64) host[ndev] = h->value.data.string;
        if (h != NULL && strcmp(h->value.data.string, "node0") == 0) ++from_node0;
        const pmix_info_t *p = find(a, na, PMIX_FABRIC_PLANE);
        if (p != NULL && plane == NULL && strlen(p->value.data.string) > 0)
            plane = strdup(p->value.data.string);
        ++ndev;
    }
    EXPECT(ndev == n, "%zu PMIX_FABRIC_DEVICE entries, PMIX_FABRIC_NUM_DEVICES %zu", ndev, n);
    if (check_costs) {
        EXPECT(from_node0 > 0 && from_node0 < ndev, "%zu of %zu devices are node0's", from_node0,
               ndev);
        const uint16_t *c = cm != NULL ? cm->value.data.ptr : NULL;
        for (size_t i = 0; c != NULL && i < n && i < 64; ++i)
            for (size_t j = 0; j < n && j < 64; ++j) {
                /* the same machine plays both nodes: every device is on the same networks */
                const uint16_t want = i == j ? 0 : strcmp(host[i], host[j]) == 0 ? 1 : 2;
                EXPECT(c[i * n + j] == want, "cost[%zu][%zu] = %u, expected %u", i, j, c[i * n + j],
                       want);
            }
        /* One plane: the devices on that IP network (all of them here). */
        if (plane != NULL) {
            char first[128];
            snprintf(first, sizeof first, "%s", plane);
            first[strcspn(first, ",")] = '\0';
            pmix_info_t dir;
            PMIX_INFO_LOAD(&dir, PMIX_FABRIC_PLANE, first, PMIX_STRING);
            pmix_fabric_t g;
            memset(&g, 0, sizeof g);
            rc = PMIx_Fabric_register(&g, &dir, 1);
            EXPECT(rc == PMIX_SUCCESS && size_of(&g, PMIX_FABRIC_NUM_DEVICES) == n &&
                       g.index != f.index,
                   "plane %s: %s", first, PMIx_Error_string(rc));
            if (rc == PMIX_SUCCESS) PMIx_Fabric_deregister(&g);
            PMIX_INFO_DESTRUCT(&dir);
        }
        /* A fabric nobody has. */
        pmix_info_t ib;
        PMIX_INFO_LOAD(&ib, PMIX_FABRIC_IDENTIFIER, "infiniband", PMIX_STRING);
        pmix_fabric_t h;
        memset(&h, 0, sizeof h);
        rc = PMIx_Fabric_register(&h, &ib, 1);
        EXPECT(rc == PMIX_ERR_NOT_FOUND, "an infiniband fabric: %s", PMIx_Error_string(rc));
        PMIX_INFO_DESTRUCT(&ib);
        rc = PMIx_Fabric_update(&f);
        EXPECT(rc == PMIX_SUCCESS && size_of(&f, PMIX_FABRIC_NUM_DEVICES) == n, "Fabric_update: %s",
               PMIx_Error_string(rc));
    }
    free((char *)plane);
    rc = PMIx_Fabric_deregister(&f);
    EXPECT(rc == PMIX_SUCCESS && f.info == NULL, "Fabric_deregister: %s", PMIx_Error_string(rc));
    rc = PMIx_Fabric_deregister(&f);
    EXPECT(rc == PMIX_ERR_BAD_PARAM, "a second Fabric_deregister: %s", PMIx_Error_string(rc));
    return n;
}

/* The IPv4 network ("192.0.2.0/24") of the first interface that is up, not
 * loopback and has one, and its name; 0 when there is none. */
static int first_ipv4_network(char *out, size_t len, char *ifname) {
    struct ifaddrs *list = NULL, *a;
    int ok = 0;
    if (getifaddrs(&list) != 0) return 0;
    for (a = list; a != NULL && !ok; a = a->ifa_next) {
        if (a->ifa_addr == NULL || a->ifa_netmask == NULL || a->ifa_addr->sa_family != AF_INET)
            continue;
        if ((a->ifa_flags & IFF_UP) == 0 || (a->ifa_flags & IFF_LOOPBACK) != 0) continue;
        struct in_addr net = ((struct sockaddr_in *)a->ifa_addr)->sin_addr;
        uint32_t mask = ntohl(((struct sockaddr_in *)a->ifa_netmask)->sin_addr.s_addr);
        int prefix = 0;
        while (prefix < 32 && (mask & (0x80000000u >> prefix)) != 0) ++prefix;
        net.s_addr &= htonl(mask);
        char text[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &net, text, sizeof text);
        snprintf(out, len, "%s/%d", text, prefix);
        snprintf(ifname, IF_NAMESIZE, "%s", a->ifa_name);
        ok = 1;
    }
    freeifaddrs(list);
    return ok;
}

/* Rank `rank`'s PMIX_FABRIC_ENDPT in this server's datastore: its first
 * port, and the uuid checked to be "<node>:<ifname>"; -1 when absent. */
static int endpoint_port(const char *nspace, int rank, const char *node_name, const char *ifname) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, nspace, (pmix_rank_t)rank);
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(&p, PMIX_FABRIC_ENDPT, NULL, 0, &val);
    EXPECT(rc == PMIX_SUCCESS, "Get PMIX_FABRIC_ENDPT of rank %d: %s", rank, PMIx_Error_string(rc));
    if (rc != PMIX_SUCCESS) return -1;
    int port = -1;
    if (val->type == PMIX_DATA_ARRAY && val->data.darray->type == PMIX_ENDPOINT &&
        val->data.darray->size == 2) {
        const pmix_endpoint_t *e = val->data.darray->array;
        char want[300], text[128] = "";
        snprintf(want, sizeof want, "%s:%s", node_name, ifname);
        EXPECT(e[0].uuid != NULL && strcmp(e[0].uuid, want) == 0, "rank %d's uuid %s, not %s", rank,
               e[0].uuid != NULL ? e[0].uuid : "(none)", want);
        EXPECT(e[0].osname != NULL && strcmp(e[0].osname, ifname) == 0, "rank %d's osname", rank);
        memcpy(text, e[0].endpt.bytes, e[0].endpt.size < 127 ? e[0].endpt.size : 127);
        const char *colon = strrchr(text, ':');
        if (colon != NULL) port = atoi(colon + 1);
    } else {
        EXPECT(0, "rank %d's PMIX_FABRIC_ENDPT is not 2 pmix_endpoint_t", rank);
    }
    PMIX_VALUE_RELEASE(val);
    return port;
}

static int forked_port; /* the port the last key_of_rank's setup_fork gave */

static char *key_of_rank(const char *nspace, int rank) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, nspace, (pmix_rank_t)rank);
    pmix_status_t rc = PMIx_server_register_client(&p, getuid(), getgid(), NULL, NULL, NULL);
    EXPECT(rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED, "register_client");
    char **env = calloc(1, sizeof(char *));
    rc = PMIx_server_setup_fork(&p, &env);
    EXPECT(rc == PMIX_SUCCESS, "setup_fork rank %d: %s", rank, PMIx_Error_string(rc));
    char *key = NULL;
    for (char **e = env; *e != NULL; ++e) {
        if (strncmp(*e, "PMIX_FABRIC_SEC_KEY=", 20) == 0) key = strdup(*e + 20);
        if (strncmp(*e, "OMPI_MCA_btl_tcp_port_min_v4=", 29) == 0) forked_port = atoi(*e + 29);
        free(*e);
    }
    free(env);
    return key != NULL ? key : strdup("");
}

static void register_job(const char *nspace) {
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, nspace);
    uint32_t two = 2;
    pmix_info_t size;
    PMIX_INFO_LOAD(&size, PMIX_JOB_SIZE, &two, PMIX_UINT32);
    pmix_status_t rc = PMIx_server_register_nspace(ns, 1, &size, 1, NULL, NULL);
    EXPECT(rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED, "register_nspace: %s",
           PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&size);
}

static int run_node(int fd) {
    alarm(60);
    setenv("PMIX_MCA_pnet_tcp_ports", node == 0 ? "43000-43009" : "43100-43109", 1);
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    pmix_status_t rc = PMIx_server_init(&module, NULL, 0);
    if (rc != PMIX_SUCCESS) die("PMIx_server_init");
    const char *nspace = "network-job";
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, nspace);
    if (node == 0) {
        pmix_info_t name;
        PMIX_INFO_LOAD(&name, PMIX_HOSTNAME, "node0", PMIX_STRING);
        rc = PMIx_server_collect_inventory(&name, 1, on_inventory, NULL);
        EXPECT(rc == PMIX_SUCCESS, "collect_inventory: %s", PMIx_Error_string(rc));
        if (rc != PMIX_SUCCESS) die("collect_inventory");
        wait_cb();
        EXPECT(cb_status == PMIX_SUCCESS, "collect_inventory: %s", PMIx_Error_string(cb_status));
        check_inventory(cb_info, cb_ninfo);
        send_infos(fd, cb_info, cb_ninfo);
        PMIX_INFO_FREE(cb_info, cb_ninfo);
        PMIX_INFO_DESTRUCT(&name);
        /* node1's inventory, to plan node1's interface. */
        size_t nn1 = 0;
        pmix_info_t *inv1 = recv_infos(fd, &nn1);
        rc = PMIx_server_deliver_inventory(inv1, nn1, NULL, 0, NULL, NULL);
        EXPECT(rc == PMIX_OPERATION_SUCCEEDED, "deliver node1's inventory: %s",
               PMIx_Error_string(rc));
        PMIX_INFO_FREE(inv1, nn1);
        /* The launch: setup_application here, its answer to both nodes. */
        uint32_t endpts = 2;
        pmix_info_t req[4];
        PMIX_INFO_LOAD(&req[0], PMIX_ALLOC_FABRIC_ID, "multinode-net", PMIX_STRING);
        PMIX_INFO_LOAD(&req[1], PMIX_ALLOC_FABRIC_TYPE, "tcp", PMIX_STRING);
        PMIX_INFO_LOAD(&req[2], PMIX_ALLOC_FABRIC_ENDPTS, &endpts, PMIX_UINT32);
        size_t nreq = 3;
        char plane[64] = "", ifname[IF_NAMESIZE + 1] = "";
        if (first_ipv4_network(plane, sizeof plane, ifname))
            PMIX_INFO_LOAD(&req[nreq++], PMIX_ALLOC_FABRIC_PLANE, plane, PMIX_STRING);
        pmix_data_array_t arr = {PMIX_INFO, nreq, req};
        pmix_info_t fabric[3];
        PMIX_INFO_LOAD(&fabric[0], PMIX_ALLOC_FABRIC, &arr, PMIX_DATA_ARRAY);
        PMIX_INFO_LOAD(&fabric[1], PMIX_NODE_MAP, "node0,node1", PMIX_STRING);
        PMIX_INFO_LOAD(&fabric[2], PMIX_PROC_MAP, "0;1", PMIX_STRING);
        rc = PMIx_server_setup_application(ns, fabric, 3, on_app, NULL);
        if (rc != PMIX_SUCCESS) die("setup_application");
        wait_cb();
        EXPECT(cb_status == PMIX_SUCCESS, "setup_application: %s", PMIx_Error_string(cb_status));
        send_infos(fd, cb_info, cb_ninfo);
        register_job(nspace);
        rc = PMIx_server_setup_local_support(ns, cb_info, cb_ninfo, NULL, NULL);
        EXPECT(rc == PMIX_OPERATION_SUCCEEDED, "setup_local_support: %s", PMIx_Error_string(rc));
        PMIX_INFO_FREE(cb_info, cb_ninfo);
        char *mine = key_of_rank(nspace, 0);
        const int port0 = forked_port;
        size_t len = 0;
        char *theirs = recv_bytes(fd, &len);
        EXPECT(strlen(mine) == 64, "rank 0's key '%s'", mine);
        EXPECT(strcmp(mine, theirs) == 0, "node1's key '%s' is not node0's '%s'", theirs, mine);
        char *seen = recv_bytes(fd, &len); /* rank 0's port in node1's PMIX_FABRIC_ENDPT */
        EXPECT(port0 >= 43000 && port0 <= 43008 && atoi(seen) == port0,
               "node1 sees rank 0's port as %s, node0 gave it %d", seen, port0);
        free(seen);
        size_t n1 = 0;
        char *n1_failures = recv_bytes(fd, &n1);
        EXPECT(strcmp(n1_failures, "0") == 0, "node1 had %s failed checks", n1_failures);
        free(mine);
        free(theirs);
        free(n1_failures);
        for (size_t i = 0; i < nreq; ++i) PMIX_INFO_DESTRUCT(&req[i]);
        for (size_t i = 0; i < 3; ++i) PMIX_INFO_DESTRUCT(&fabric[i]);
    } else {
        pmix_info_t name;
        PMIX_INFO_LOAD(&name, PMIX_HOSTNAME, "node1", PMIX_STRING);
        rc = PMIx_server_collect_inventory(&name, 1, on_inventory, NULL);
        if (rc != PMIX_SUCCESS) die("collect_inventory");
        wait_cb();
        send_infos(fd, cb_info, cb_ninfo);
        PMIX_INFO_FREE(cb_info, cb_ninfo);
        PMIX_INFO_DESTRUCT(&name);
        const size_t mine = fabric_devices(0);
        size_t n = 0;
        pmix_info_t *inv = recv_infos(fd, &n);
        rc = PMIx_server_deliver_inventory(inv, n, NULL, 0, NULL, NULL);
        EXPECT(rc == PMIX_OPERATION_SUCCEEDED, "deliver_inventory: %s", PMIx_Error_string(rc));
        const size_t both = fabric_devices(1);
        EXPECT(mine > 0 && both == 2 * mine, "the fabric has %zu devices, then %zu", mine, both);
        /* An inventory naming no node cannot be stored. */
        const pmix_info_t *sig = find(inv, n, PMIX_TOPOLOGY_SIGNATURE);
        rc = PMIx_server_deliver_inventory((pmix_info_t *)sig, sig != NULL ? 1 : 0, NULL, 0, NULL,
                                           NULL);
        EXPECT(rc == PMIX_ERR_BAD_PARAM, "deliver without PMIX_HOSTNAME: %s",
               PMIx_Error_string(rc));
        PMIX_INFO_FREE(inv, n);
        pmix_info_t *launch = recv_infos(fd, &n);
        register_job(nspace);
        rc = PMIx_server_setup_local_support(ns, launch, n, NULL, NULL);
        EXPECT(rc == PMIX_OPERATION_SUCCEEDED, "setup_local_support: %s", PMIx_Error_string(rc));
        PMIX_INFO_FREE(launch, n);
        char *key = key_of_rank(nspace, 1);
        send_bytes(fd, key, strlen(key));
        free(key);
        /* Both ranks' endpoints, reserved by node0, on the plane's interface. */
        char plane[64] = "", ifname[IF_NAMESIZE + 1] = "";
        if (first_ipv4_network(plane, sizeof plane, ifname)) {
            EXPECT(endpoint_port(nspace, 1, "node1", ifname) == forked_port,
                   "rank 1's PMIX_FABRIC_ENDPT is not the port setup_fork gave (%d)", forked_port);
            char port0[16];
            snprintf(port0, sizeof port0, "%d", endpoint_port(nspace, 0, "node0", ifname));
            send_bytes(fd, port0, strlen(port0));
        } else {
            send_bytes(fd, "-1", 2);
            EXPECT(0, "this machine has no IPv4 interface for a plane");
        }
        char count[16];
        snprintf(count, sizeof count, "%d", failures);
        send_bytes(fd, count, strlen(count));
    }
    PMIx_server_finalize();
    if (failures != 0) return 1;
    if (node == 0)
        printf(
            "network host ok: inventory delivered, fabric of both nodes, one job key, "
            "endpoints of both ranks\n");
    fflush(stdout);
    return 0;
}

int main(void) {
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) die("socketpair");
    pid_t pids[2];
    fflush(stdout);
    for (int i = 0; i < 2; ++i) {
        pids[i] = fork();
        if (pids[i] == 0) {
            node = i;
            close(fds[1 - i]);
            _exit(run_node(fds[i]));
        }
    }
    close(fds[0]);
    close(fds[1]);
    int rc = 0;
    for (int i = 0; i < 2; ++i) {
        int status = 0;
        waitpid(pids[i], &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) rc = 1;
    }
    return rc;
}
