/* topology_host MODE CLIENT: a host embedding the server that registers a
 * job without any topology key and forks one client (CLIENT shared 3): the
 * client must load the topology the server shares (docs/network.md,
 * "Shared by the server"), then the file is gone after PMIx_server_finalize.
 *   MODE topology2: the host builds a 3-PU synthetic topology and gives it as
 *                   PMIX_TOPOLOGY2 (this machine has another shape);
 *   MODE share:     PMIX_SERVER_SHARE_TOPOLOGY with HWLOC_SYNTHETIC set in
 *                   the host (3 PUs); the client drops that variable.
 * The host has no fabric upcall: the client checks that its
 * PMIx_Fabric_register is PMIX_ERR_NOT_SUPPORTED.
 * Files go to a private PMIX_SERVER_TMPDIR. Bounded by alarm(). */
#include <hwloc.h>
#include <pmix_server.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host_common.h"

#define CHECK(cond, ...)                        \
    do {                                        \
        if (!(cond)) {                          \
            fprintf(stderr, "topology_host: "); \
            fprintf(stderr, __VA_ARGS__);       \
            fprintf(stderr, "\n");              \
            exit(1);                            \
        }                                       \
    } while (0)

static int count_files(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;)
        if (strstr(e->d_name, "topology.xml") != NULL) ++n;
    if (d != NULL) closedir(d);
    return n;
}

int main(int argc, char **argv) {
    CHECK(argc == 3 && (strcmp(argv[1], "topology2") == 0 || strcmp(argv[1], "share") == 0),
          "usage: topology_host topology2|share CLIENT");
    alarm(60);
    const int given = strcmp(argv[1], "topology2") == 0;
    char dir[] = "/tmp/pmixpp-topology-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    hwloc_topology_t synthetic = NULL;
    pmix_topology_t topo = {"hwloc", NULL};
    pmix_info_t info[2];
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, dir, PMIX_STRING);
    if (given) {
        hwloc_topology_init(&synthetic);
        CHECK(hwloc_topology_set_synthetic(synthetic, "pack:3 core:1 pu:1") == 0 &&
                  hwloc_topology_load(synthetic) == 0,
              "synthetic topology");
        topo.topology = synthetic;
        PMIX_INFO_LOAD(&info[1], PMIX_TOPOLOGY2, &topo, PMIX_TOPO);
    } else {
        setenv("HWLOC_SYNTHETIC", "pack:3 core:1 pu:1", 1);
        bool yes = true;
        PMIX_INFO_LOAD(&info[1], PMIX_SERVER_SHARE_TOPOLOGY, &yes, PMIX_BOOL);
    }
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    pmix_status_t rc = PMIx_server_init(&module, info, 2);
    CHECK(rc == PMIX_SUCCESS, "server_init: %s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&info[0]);  // the server copied what it keeps
    PMIX_INFO_DESTRUCT(&info[1]);
    CHECK(host_register_job("topo-job", 1) == PMIX_SUCCESS, "register the job");
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "topo-job", 0);
    char **env = NULL;
    rc = PMIx_server_setup_fork(&p, &env);
    CHECK(rc == PMIX_SUCCESS, "setup_fork: %s", PMIx_Error_string(rc));
    pid_t child = fork();
    if (child == 0) {
        for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
        /* This host has no fabric upcall: the client's request must say so. */
        setenv("TOPOLOGY_CLIENT_EXPECT_NO_FABRIC", "1", 1);
        char *args[] = {argv[2], "shared", "3", NULL};
        execv(argv[2], args);
        _exit(127);
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child, "waitpid");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the client failed (status %d)", status);
    CHECK(count_files(dir) == 1, "no topology file in %s while the server runs", dir);
    for (char **e = env; e != NULL && *e != NULL; ++e) free(*e);
    free(env);
    PMIx_server_finalize();
    CHECK(count_files(dir) == 0, "the topology file is left in %s after finalize", dir);
    rmdir(dir);
    if (synthetic != NULL) hwloc_topology_destroy(synthetic);
    printf("topology_host ok: %s\n", argv[1]);
    return 0;
}
