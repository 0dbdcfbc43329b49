// libhwloc, opened on first use instead of at exec.
//
// libpmix calls hwloc only to pack and unpack PMIX_TOPO and PMIX_PROC_CPUSET
// values (wire/codec.cpp), yet linking it made every process that loads
// libpmix map libhwloc and libudev and resolve their relocations before main()
// (bench/README.md, "Where PMIx_Init's time goes"). These definitions stand in
// for the functions the codec and runtime/topology.cpp call: the first call opens libhwloc
// (PMIXPP_HWLOC_SONAME, the library the build found) and every call forwards
// to it. They are not exported (libpmix.map), and -Bsymbolic binds libpmix's
// own calls to them. Without libhwloc, each reports failure the way hwloc does
// (-1 with errno, or NULL), and the codec reports that value as not packable.
#include <dlfcn.h>
#include <hwloc.h>

#include <cerrno>

#ifndef PMIXPP_HWLOC_SONAME
#error "PMIXPP_HWLOC_SONAME must name the hwloc library (framework/CMakeLists.txt)"
#endif

namespace {

void *hwloc_library() {
    static void *const handle = ::dlopen(PMIXPP_HWLOC_SONAME, RTLD_NOW | RTLD_LOCAL);
    return handle;
}

template <class Fn>
Fn resolve(const char *name) {
    void *library = hwloc_library();
    return library != nullptr ? reinterpret_cast<Fn>(::dlsym(library, name)) : nullptr;
}

}  // namespace

// Each forwarder looks its function up once, on its first call.
#define PMIXPP_HWLOC_TARGET(fn) static const auto target = resolve<decltype(&::fn)>(#fn)

extern "C" {

int hwloc_topology_init(hwloc_topology_t *topologyp) {
    PMIXPP_HWLOC_TARGET(hwloc_topology_init);
    if (target == nullptr) {
        errno = ENOSYS;
        return -1;
    }
    return target(topologyp);
}

int hwloc_topology_load(hwloc_topology_t topology) {
    PMIXPP_HWLOC_TARGET(hwloc_topology_load);
    if (target == nullptr) {
        errno = ENOSYS;
        return -1;
    }
    return target(topology);
}

void hwloc_topology_destroy(hwloc_topology_t topology) {
    PMIXPP_HWLOC_TARGET(hwloc_topology_destroy);
    if (target != nullptr) target(topology);
}

int hwloc_topology_set_xmlbuffer(hwloc_topology_t topology, const char *buffer, int size) {
    PMIXPP_HWLOC_TARGET(hwloc_topology_set_xmlbuffer);
    if (target == nullptr) {
        errno = ENOSYS;
        return -1;
    }
    return target(topology, buffer, size);
}

int hwloc_topology_export_xmlbuffer(hwloc_topology_t topology, char **xmlbuffer, int *buflen,
                                    unsigned long flags) {
    PMIXPP_HWLOC_TARGET(hwloc_topology_export_xmlbuffer);
    if (target == nullptr) {
        errno = ENOSYS;
        return -1;
    }
    return target(topology, xmlbuffer, buflen, flags);
}

void hwloc_free_xmlbuffer(hwloc_topology_t topology, char *xmlbuffer) {
    PMIXPP_HWLOC_TARGET(hwloc_free_xmlbuffer);
    if (target != nullptr) target(topology, xmlbuffer);
}

hwloc_bitmap_t hwloc_bitmap_alloc(void) {
    PMIXPP_HWLOC_TARGET(hwloc_bitmap_alloc);
    return target != nullptr ? target() : nullptr;
}

void hwloc_bitmap_free(hwloc_bitmap_t bitmap) {
    PMIXPP_HWLOC_TARGET(hwloc_bitmap_free);
    if (target != nullptr) target(bitmap);
}

int hwloc_bitmap_list_asprintf(char **strp, hwloc_const_bitmap_t bitmap) {
    PMIXPP_HWLOC_TARGET(hwloc_bitmap_list_asprintf);
    if (target == nullptr) {
        errno = ENOSYS;
        return -1;
    }
    return target(strp, bitmap);
}

int hwloc_bitmap_list_sscanf(hwloc_bitmap_t bitmap, const char *string) {
    PMIXPP_HWLOC_TARGET(hwloc_bitmap_list_sscanf);
    if (target == nullptr) {
        errno = ENOSYS;
        return -1;
    }
    return target(bitmap, string);
}

// runtime/topology.cpp: PMIx_Load_topology, PMIx_Get_cpuset, the locality strings.
int hwloc_get_type_depth(hwloc_topology_t topology, hwloc_obj_type_t type) {
    PMIXPP_HWLOC_TARGET(hwloc_get_type_depth);
    return target != nullptr ? target(topology, type) : HWLOC_TYPE_DEPTH_UNKNOWN;
}

unsigned hwloc_get_nbobjs_by_depth(hwloc_topology_t topology, int depth) {
    PMIXPP_HWLOC_TARGET(hwloc_get_nbobjs_by_depth);
    return target != nullptr ? target(topology, depth) : 0U;
}

hwloc_obj_t hwloc_get_obj_by_depth(hwloc_topology_t topology, int depth, unsigned idx) {
    PMIXPP_HWLOC_TARGET(hwloc_get_obj_by_depth);
    return target != nullptr ? target(topology, depth, idx) : nullptr;
}

int hwloc_get_cpubind(hwloc_topology_t topology, hwloc_cpuset_t set, int flags) {
    PMIXPP_HWLOC_TARGET(hwloc_get_cpubind);
    if (target == nullptr) {
        errno = ENOSYS;
        return -1;
    }
    return target(topology, set, flags);
}

int hwloc_bitmap_set(hwloc_bitmap_t bitmap, unsigned id) {
    PMIXPP_HWLOC_TARGET(hwloc_bitmap_set);
    return target != nullptr ? target(bitmap, id) : -1;
}

int hwloc_bitmap_iszero(hwloc_const_bitmap_t bitmap) {
    PMIXPP_HWLOC_TARGET(hwloc_bitmap_iszero);
    return target != nullptr ? target(bitmap) : 1;
}

int hwloc_bitmap_intersects(hwloc_const_bitmap_t bitmap1, hwloc_const_bitmap_t bitmap2) {
    PMIXPP_HWLOC_TARGET(hwloc_bitmap_intersects);
    return target != nullptr ? target(bitmap1, bitmap2) : 0;
}

int hwloc_topology_set_xml(hwloc_topology_t topology, const char *xmlpath) {
    PMIXPP_HWLOC_TARGET(hwloc_topology_set_xml);
    if (target == nullptr) {
        errno = ENOSYS;
        return -1;
    }
    return target(topology, xmlpath);
}

int hwloc_topology_set_flags(hwloc_topology_t topology, unsigned long flags) {
    PMIXPP_HWLOC_TARGET(hwloc_topology_set_flags);
    if (target == nullptr) {
        errno = ENOSYS;
        return -1;
    }
    return target(topology, flags);
}

// runtime/devices.cpp: the I/O discovery and the walk over a cpuset's PUs.
int hwloc_topology_set_io_types_filter(hwloc_topology_t topology, enum hwloc_type_filter_e filter) {
    PMIXPP_HWLOC_TARGET(hwloc_topology_set_io_types_filter);
    if (target == nullptr) {
        errno = ENOSYS;
        return -1;
    }
    return target(topology, filter);
}

int hwloc_bitmap_first(hwloc_const_bitmap_t bitmap) {
    PMIXPP_HWLOC_TARGET(hwloc_bitmap_first);
    return target != nullptr ? target(bitmap) : -1;
}

int hwloc_bitmap_next(hwloc_const_bitmap_t bitmap, int prev) {
    PMIXPP_HWLOC_TARGET(hwloc_bitmap_next);
    return target != nullptr ? target(bitmap, prev) : -1;
}

}  // extern "C"
