/* What a process that links libpmix.so.2 loads before it calls anything.
 *
 * Every client pays for libpmix's dependencies at exec: the dynamic loader
 * maps each one and resolves its symbolic relocations by name. libpmix
 * compiles spdlog and fmt in, calls nothing outside libevent_core, and opens
 * libhwloc only when a topology or cpuset value is packed or unpacked, so
 * libspdlog, libfmt, the full libevent (http, dns, rpc), libhwloc and its
 * libudev must not be among the loaded objects (bench/README.md, "Where
 * PMIx_Init's time goes").
 * Exit 0 when none of them is loaded and libpmix.so.2 itself is; the output
 * lists every loaded object. */
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <string.h>

#include <pmix.h>

static const char *const kUnwanted[] = {"libspdlog.so", "libfmt.so", "libevent-2.1.so",
                                        "libhwloc.so", "libudev.so"};

struct scan {
    int found_pmix;
    int unwanted;
};

static int visit(struct dl_phdr_info *info, size_t size, void *arg) {
    struct scan *s = arg;
    (void)size;
    const char *path = info->dlpi_name;
    if (path == NULL || path[0] == '\0') return 0;
    const char *base = strrchr(path, '/');
    base = base != NULL ? base + 1 : path;
    printf("loaded: %s\n", path);
    if (strncmp(base, "libpmix.so", 10) == 0) s->found_pmix = 1;
    for (size_t i = 0; i < sizeof kUnwanted / sizeof kUnwanted[0]; ++i) {
        if (strncmp(base, kUnwanted[i], strlen(kUnwanted[i])) == 0) {
            printf("UNWANTED: %s is loaded with libpmix\n", path);
            s->unwanted = 1;
        }
    }
    return 0;
}

int main(void) {
    /* A real reference, so that the link keeps libpmix even with --as-needed. */
    printf("library: %s\n", PMIx_Get_version());
    struct scan s = {0, 0};
    dl_iterate_phdr(visit, &s);
    if (!s.found_pmix) {
        printf("FAIL: libpmix.so.2 not among the loaded objects\n");
        return 1;
    }
    return s.unwanted ? 1 : 0;
}
