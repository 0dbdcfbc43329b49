/* startup.c_client_loads_no_libstdcxx: a C client of our library, once
 * PMIx_Init has loaded its components (gds, ptl) and a fence and a Get have
 * run, has no libstdc++.so mapped: libpmix and the components carry the part
 * of libstdc++ they use (PMIXPP_STATIC_LIBSTDCXX, docs/building.md).
 * Prints "c runtime ok" or the mappings it found. */
#include <pmix.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_proc_t job = me;
    job.rank = PMIX_RANK_WILDCARD;
    pmix_value_t *val = NULL;
    if ((rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &val)) != PMIX_SUCCESS ||
        (rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "Get/Fence: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIX_VALUE_RELEASE(val);

    FILE *maps = fopen("/proc/self/maps", "r");
    if (maps == NULL) return 1;
    char line[4096];
    int found = 0, components = 0;
    while (fgets(line, sizeof line, maps) != NULL) {
        if (strstr(line, "libstdc++") != NULL) {
            if (found++ == 0) printf("rank %u maps libstdc++:\n", me.rank);
            printf("  %s", line);
        }
        if (strstr(line, "/pmix_mca_") != NULL) components++;
    }
    fclose(maps);
    if (components == 0) {
        /* Nothing would be shown if no component were loaded. */
        printf("rank %u: no component is mapped\n", me.rank);
        found = 1;
    }
    PMIx_Finalize(NULL, 0);
    if (found == 0) printf("c runtime ok\n");
    return found == 0 ? 0 : 1;
}
