// pmixrun's process placement (binding.hpp), on the topology libpmix loads
// (PMIx_Load_topology) and the server's string generators.
#include "binding.hpp"

#include <hwloc.h>
#include <pmix.h>
#include <pmix_server.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace pmixrun {

namespace {

BindTo g_policy = BindTo::none;
std::uint32_t g_tcp_ports = 0;

hwloc_topology_t topology() {
    static const hwloc_topology_t topo = [] {
        pmix_topology_t t = PMIX_TOPOLOGY_STATIC_INIT;
        const pmix_status_t rc = PMIx_Load_topology(&t);
        if (rc != PMIX_SUCCESS) {
            std::fprintf(stderr, "pmixrun: no topology (%s): processes get no PMIX_CPUSET\n",
                         PMIx_Error_string(rc));
            return hwloc_topology_t{nullptr};
        }
        std::free(t.source);  // the topology itself stays libpmix's
        return static_cast<hwloc_topology_t>(t.topology);
    }();
    return topo;
}

// The slot's cpus (caller frees), or nullptr.
hwloc_bitmap_t cpus_of(std::uint32_t slot) {
    hwloc_topology_t topo = topology();
    if (topo == nullptr) return nullptr;
    if (g_policy == BindTo::core) {
        const int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
        hwloc_obj_t core = ncores > 0 ? hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE,
                                                              slot % static_cast<unsigned>(ncores))
                                      : nullptr;
        if (core != nullptr && core->cpuset != nullptr) return hwloc_bitmap_dup(core->cpuset);
    }
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    if (mine != nullptr && hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_PROCESS) != 0) {
        hwloc_bitmap_free(mine);
        return nullptr;
    }
    return mine;
}

// Removes the file at exit.
struct SharedFile {
    std::string path;
    ~SharedFile() {
        if (!path.empty()) ::unlink(path.c_str());
    }
};

}  // namespace

const std::string &shared_topology_file() {
    static const SharedFile file = [] {
        SharedFile f;
        hwloc_topology_t topo = topology();
        if (topo == nullptr) return f;
        const char *dir = std::getenv("TMPDIR");
        std::string path = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") +
                           "/pmixrun." + std::to_string(::getpid()) + ".topology.xml";
        if (hwloc_topology_export_xml(topo, path.c_str(), 0) != 0) {
            std::fprintf(stderr, "pmixrun: cannot write %s: clients discover their topology\n",
                         path.c_str());
            ::unlink(path.c_str());
            return f;
        }
        f.path = std::move(path);
        return f;
    }();
    return file.path;
}

void set_tcp_ports(std::uint32_t per_process) {
    g_tcp_ports = per_process;
}

std::uint32_t tcp_ports() {
    return g_tcp_ports;
}

void set_bind_to(BindTo policy) {
    g_policy = policy;
}

bool placement_strings(std::uint32_t slot, std::string &cpuset, std::string &locality) {
    hwloc_bitmap_t cpus = cpus_of(slot);
    if (cpus == nullptr) return false;
    char source[] = "hwloc";
    const pmix_cpuset_t set{source, cpus};
    char *cpuset_text = nullptr;
    char *locality_text = nullptr;
    pmix_status_t rc = PMIx_server_generate_cpuset_string(&set, &cpuset_text);
    if (rc == PMIX_SUCCESS) rc = PMIx_server_generate_locality_string(&set, &locality_text);
    hwloc_bitmap_free(cpus);
    if (rc == PMIX_SUCCESS) {
        cpuset = cpuset_text;
        locality = locality_text;
    } else {
        std::fprintf(stderr, "pmixrun: cannot describe slot %u's cpus: %s\n", slot,
                     PMIx_Error_string(rc));
    }
    std::free(cpuset_text);
    std::free(locality_text);
    return rc == PMIX_SUCCESS;
}

SpawnBinding::SpawnBinding(std::uint32_t slot) {
    if (g_policy == BindTo::none) return;
    hwloc_topology_t topo = topology();
    if (topo == nullptr) return;
    hwloc_bitmap_t cpus = cpus_of(slot);
    if (cpus == nullptr) return;
    hwloc_bitmap_t saved = hwloc_bitmap_alloc();
    if (saved != nullptr && hwloc_get_cpubind(topo, saved, HWLOC_CPUBIND_THREAD) == 0 &&
        hwloc_set_cpubind(topo, cpus, HWLOC_CPUBIND_THREAD) == 0) {
        saved_ = saved;
    } else {
        std::fprintf(stderr, "pmixrun: cannot bind slot %u\n", slot);
        if (saved != nullptr) hwloc_bitmap_free(saved);
    }
    hwloc_bitmap_free(cpus);
}

SpawnBinding::~SpawnBinding() {
    if (saved_ == nullptr) return;
    auto *saved = static_cast<hwloc_bitmap_t>(saved_);
    hwloc_set_cpubind(topology(), saved, HWLOC_CPUBIND_THREAD);
    hwloc_bitmap_free(saved);
}

}  // namespace pmixrun
