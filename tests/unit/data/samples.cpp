#include "samples.hpp"

#include <hwloc.h>

#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace samples {
namespace {

void load(pmix_value_t *v, const void *data, pmix_data_type_t t) {
    if (PMIx_Value_load(v, data, t) != PMIX_SUCCESS) {
        throw std::runtime_error(std::string("PMIx_Value_load failed for ") +
                                 PMIx_Data_type_string(t));
    }
}

template <class T>
void load_num(pmix_value_t *v, T x, pmix_data_type_t t) {
    load(v, &x, t);
}

pmix_proc_t proc(const char *ns, pmix_rank_t rank) {
    pmix_proc_t p;
    std::memset(&p, 0, sizeof p);
    std::strncpy(p.nspace, ns, PMIX_MAX_NSLEN);
    p.rank = rank;
    return p;
}

char *cstr(const char *s) {
    return const_cast<char *>(s);
}

// An info array with a string, a nested array of uint32 and a nested array
// of infos: the shape PMIx_Get returns for PMIX_QUERY results.
void make_info_array(pmix_data_array_t *out) {
    auto *infos = static_cast<pmix_info_t *>(std::calloc(3, sizeof(pmix_info_t)));
    PMIx_Info_load(&infos[0], "k1", "v1", PMIX_STRING);
    uint32_t nums[] = {1, 2, 3};
    pmix_data_array_t numarray{PMIX_UINT32, 3, nums};
    PMIx_Info_load(&infos[1], "arr", &numarray, PMIX_DATA_ARRAY);
    pmix_info_t inner[1];
    std::memset(inner, 0, sizeof inner);
    PMIx_Info_load(&inner[0], "inner", "deep", PMIX_STRING);
    pmix_data_array_t innerarray{PMIX_INFO, 1, inner};
    PMIx_Info_load(&infos[2], "nested", &innerarray, PMIX_DATA_ARRAY);
    PMIx_Value_destruct(&inner[0].value);
    infos[2].flags = PMIX_INFO_ARRAY_END;
    out->type = PMIX_INFO;
    out->size = 3;
    out->array = infos;
}

}  // namespace

const std::vector<pmix_data_type_t> &all_types() {
    static const std::vector<pmix_data_type_t> types = [] {
        std::vector<pmix_data_type_t> t;
        for (pmix_data_type_t x = PMIX_BOOL; x <= PMIX_STOR_ACCESS_TYPE; ++x) {
            if (x == 26 || x == 29 || x == 44 || x == PMIX_KVAL)
                continue;  // holes in the numbering; private kval
            t.push_back(x);
        }
        return t;
    }();
    return types;
}

bool boxed(pmix_data_type_t t) {
    switch (t) {
        case PMIX_VALUE:
        case PMIX_PROC:
        case PMIX_APP:
        case PMIX_INFO:
        case PMIX_PDATA:
        case PMIX_PROC_INFO:
        case PMIX_DATA_ARRAY:
        case PMIX_QUERY:
        case PMIX_COORD:
        case PMIX_REGATTR:
        case PMIX_PROC_CPUSET:
        case PMIX_GEOMETRY:
        case PMIX_DEVICE_DIST:
        case PMIX_ENDPOINT:
        case PMIX_TOPO:
        case PMIX_PROC_NSPACE:
        case PMIX_PROC_STATS:
        case PMIX_DISK_STATS:
        case PMIX_NET_STATS:
        case PMIX_NODE_STATS:
        case PMIX_DATA_BUFFER:
            return true;
        default:
            return false;
    }
}

void *element(pmix_value_t *v) {
    return boxed(v->type) ? v->data.ptr : static_cast<void *>(&v->data);
}

void adopt(pmix_value_t *v, pmix_data_type_t t, void *storage) {
    PMIX_VALUE_CONSTRUCT(v);
    v->type = t;
    if (boxed(t)) {
        v->data.ptr = storage;
    } else {
        // Inline elements may be smaller than the union: copy what was allocated.
        std::memcpy(&v->data, storage, std::min(sizeof v->data, malloc_usable_size(storage)));
        std::free(storage);
    }
}

void make(pmix_value_t *v, pmix_data_type_t t) {
    PMIX_VALUE_CONSTRUCT(v);
    switch (t) {
        case PMIX_BOOL:
            return load_num(v, true, t);
        case PMIX_BYTE:
        case PMIX_UINT8:
        case PMIX_COMMAND:
            return load_num<uint8_t>(v, 0xab, t);
        case PMIX_STRING:
            return load(v, "a string", t);
        case PMIX_SIZE:
            return load_num<size_t>(v, 123456789012ULL, t);
        case PMIX_PID:
            return load_num<pid_t>(v, 4242, t);
        case PMIX_INT:
            return load_num<int>(v, -7, t);
        case PMIX_INT8:
            return load_num<int8_t>(v, -8, t);
        case PMIX_INT16:
            return load_num<int16_t>(v, -1600, t);
        case PMIX_INT32:
            return load_num<int32_t>(v, -320000, t);
        case PMIX_INT64:
            return load_num<int64_t>(v, -(1LL << 40), t);
        case PMIX_UINT:
            return load_num<unsigned>(v, 7u, t);
        case PMIX_UINT16:
            return load_num<uint16_t>(v, 0xbeef, t);
        case PMIX_UINT32:
            return load_num<uint32_t>(v, 0xdeadbeef, t);
        case PMIX_UINT64:
            return load_num<uint64_t>(v, 1ULL << 60, t);
        case PMIX_FLOAT:
            return load_num(v, 1.5f, t);
        case PMIX_DOUBLE:
            return load_num(v, 2.25, t);
        case PMIX_TIMEVAL:
            return load_num(v, timeval{12, 34}, t);
        case PMIX_TIME:
            return load_num<time_t>(v, 1700000000, t);
        case PMIX_STATUS:
            return load_num<pmix_status_t>(v, PMIX_ERR_NOT_FOUND, t);
        case PMIX_VALUE: {
            pmix_value_t inner;
            make(&inner, PMIX_PROC_INFO);
            load(v, &inner, t);
            PMIx_Value_destruct(&inner);
            return;
        }
        case PMIX_PROC:
            return load_num(v, proc("job.1", 3), t);
        case PMIX_APP: {
            char *argv[] = {cstr("prog"), cstr("-x"), nullptr};
            char *env[] = {cstr("A=1"), nullptr};
            pmix_info_t info[1];
            std::memset(info, 0, sizeof info);
            PMIx_Info_load(&info[0], PMIX_JOB_SIZE, nullptr, PMIX_BOOL);
            pmix_app_t app{cstr("/bin/prog"), argv, env, cstr("/tmp"), 4, info, 1};
            load(v, &app, t);
            return;
        }
        case PMIX_INFO: {
            pmix_info_t info;
            std::memset(&info, 0, sizeof info);
            uint32_t size = 16;
            PMIx_Info_load(&info, PMIX_JOB_SIZE, &size, PMIX_UINT32);
            info.flags = PMIX_INFO_REQD;
            load(v, &info, t);
            return;
        }
        case PMIX_PDATA: {
            pmix_pdata_t pd;
            std::memset(&pd, 0, sizeof pd);
            pd.proc = proc("pub", 1);
            std::strcpy(pd.key, "published.key");
            PMIx_Value_load(&pd.value, "payload", PMIX_STRING);
            load(v, &pd, t);
            PMIx_Value_destruct(&pd.value);
            return;
        }
        case PMIX_BYTE_OBJECT:
        case PMIX_COMPRESSED_STRING:
        case PMIX_REGEX:
        case PMIX_COMPRESSED_BYTE_OBJECT: {
            pmix_byte_object_t bo{cstr("\x01\x02\x00\x03"), 4};
            return load(v, &bo, t);
        }
        case PMIX_PERSIST:
            return load_num<pmix_persistence_t>(v, PMIX_PERSIST_APP, t);
        case PMIX_POINTER:
            return load(v, reinterpret_cast<void *>(0x1234), t);
        case PMIX_SCOPE:
            return load_num<pmix_scope_t>(v, PMIX_GLOBAL, t);
        case PMIX_DATA_RANGE:
            return load_num<pmix_data_range_t>(v, PMIX_RANGE_SESSION, t);
        case PMIX_INFO_DIRECTIVES:
            return load_num<pmix_info_directives_t>(v, PMIX_INFO_REQD, t);
        case PMIX_DATA_TYPE:
            return load_num<pmix_data_type_t>(v, PMIX_INFO, t);
        case PMIX_PROC_STATE:
            return load_num<pmix_proc_state_t>(v, PMIX_PROC_STATE_RUNNING, t);
        case PMIX_PROC_INFO: {
            pmix_proc_info_t pi{proc("job.2", 5),          cstr("node7"), cstr("/bin/exe"), 999, 3,
                                PMIX_PROC_STATE_TERMINATED};
            return load(v, &pi, t);
        }
        case PMIX_DATA_ARRAY: {
            pmix_data_array_t da;
            make_info_array(&da);
            load(v, &da, t);
            PMIx_Data_array_destruct(&da);
            return;
        }
        case PMIX_PROC_RANK:
            return load_num<pmix_rank_t>(v, 17, t);
        case PMIX_QUERY: {
            char *keys[] = {cstr(PMIX_QUERY_NAMESPACES), cstr(PMIX_QUERY_JOB_STATUS), nullptr};
            pmix_info_t qual[1];
            std::memset(qual, 0, sizeof qual);
            PMIx_Info_load(&qual[0], PMIX_NSPACE, "job.3", PMIX_STRING);
            pmix_query_t q{keys, qual, 1};
            load(v, &q, t);
            PMIx_Value_destruct(&qual[0].value);
            return;
        }
        case PMIX_ALLOC_DIRECTIVE:
            return load_num<pmix_alloc_directive_t>(v, PMIX_ALLOC_EXTEND, t);
        case PMIX_IOF_CHANNEL:
            return load_num<pmix_iof_channel_t>(
                v, PMIX_FWD_STDOUT_CHANNEL | PMIX_FWD_STDERR_CHANNEL, t);
        case PMIX_ENVAR: {
            pmix_envar_t e{cstr("PATH"), cstr("/opt/bin"), ':'};
            return load(v, &e, t);
        }
        case PMIX_COORD: {
            uint32_t c[] = {1, 2, 3};
            pmix_coord_t coord{PMIX_COORD_LOGICAL_VIEW, c, 3};
            return load(v, &coord, t);
        }
        case PMIX_REGATTR: {
            char *desc[] = {cstr("number of procs"), nullptr};
            pmix_regattr_t r;
            std::memset(&r, 0, sizeof r);
            r.name = cstr("PMIX_JOB_SIZE");
            std::strcpy(r.string, PMIX_JOB_SIZE);
            r.type = PMIX_UINT32;
            r.description = desc;
            return load(v, &r, t);
        }
        case PMIX_JOB_STATE:
            return load_num<pmix_job_state_t>(v, PMIX_JOB_STATE_RUNNING, t);
        case PMIX_LINK_STATE:
            return load_num<pmix_link_state_t>(v, PMIX_LINK_UP, t);
        case PMIX_PROC_CPUSET: {
            hwloc_bitmap_t bm = hwloc_bitmap_alloc();
            hwloc_bitmap_list_sscanf(bm, "0-1,4");
            pmix_cpuset_t cs{cstr("hwloc"), bm};
            load(v, &cs, t);
            hwloc_bitmap_free(bm);
            return;
        }
        case PMIX_GEOMETRY: {
            uint32_t c1[] = {4, 5};
            uint32_t c2[] = {6};
            pmix_coord_t coords[] = {{PMIX_COORD_LOGICAL_VIEW, c1, 2},
                                     {PMIX_COORD_PHYSICAL_VIEW, c2, 1}};
            pmix_geometry_t g{2, cstr("uuid-1"), cstr("eth0"), coords, 2};
            return load(v, &g, t);
        }
        case PMIX_DEVICE_DIST: {
            pmix_device_distance_t d{cstr("uuid-gpu"), cstr("gpu0"), PMIX_DEVTYPE_GPU, 1, 9};
            return load(v, &d, t);
        }
        case PMIX_ENDPOINT: {
            pmix_endpoint_t e{cstr("uuid-nic"), cstr("ib0"), {cstr("\x10\x20\x30"), 3}};
            return load(v, &e, t);
        }
        case PMIX_TOPO: {
            hwloc_topology_t topo;
            hwloc_topology_init(&topo);
            hwloc_topology_load(topo);
            pmix_topology_t pt{cstr("hwloc"), topo};
            load(v, &pt, t);
            hwloc_topology_destroy(topo);
            return;
        }
        case PMIX_DEVTYPE:
            return load_num<pmix_device_type_t>(v, PMIX_DEVTYPE_GPU | PMIX_DEVTYPE_NETWORK, t);
        case PMIX_LOCTYPE:
            return load_num<pmix_locality_t>(v, PMIX_LOCALITY_SHARE_CORE, t);
        case PMIX_PROC_NSPACE: {
            pmix_nspace_t ns;
            std::memset(ns, 0, sizeof ns);
            std::strcpy(ns, "my.nspace");
            return load(v, &ns, t);
        }
        case PMIX_PROC_STATS: {
            pmix_proc_stats_t s;
            std::memset(&s, 0, sizeof s);
            s.node = cstr("node3");
            s.proc = proc("job.4", 2);
            s.pid = 77;
            s.cmd = cstr("a.out");
            s.state = 'R';
            s.time = {5, 6};
            s.percent_cpu = 12.5f;
            s.priority = -2;
            s.num_threads = 8;
            s.pss = 1.25f;
            s.vsize = 100.5f;
            s.rss = 50.25f;
            s.peak_vsize = 200.0f;
            s.processor = 3;
            s.sample_time = {7, 8};
            return load(v, &s, t);
        }
        case PMIX_DISK_STATS: {
            pmix_disk_stats_t d{cstr("sda"), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
            return load(v, &d, t);
        }
        case PMIX_NET_STATS: {
            pmix_net_stats_t n{cstr("eth0"), 1, 2, 3, 4, 5, 6};
            return load(v, &n, t);
        }
        case PMIX_NODE_STATS: {
            pmix_disk_stats_t disks[] = {{cstr("sda"), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
                                         {cstr("sdb"), 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21}};
            pmix_net_stats_t nets[] = {{cstr("lo"), 9, 8, 7, 6, 5, 4}};
            pmix_node_stats_t n;
            std::memset(&n, 0, sizeof n);
            n.node = cstr("node9");
            n.la = 0.5f;
            n.la5 = 0.25f;
            n.la15 = 0.125f;
            n.total_mem = 1024;
            n.free_mem = 512;
            n.mapped = 3;
            n.sample_time = {9, 10};
            n.diskstats = disks;
            n.ndiskstats = 2;
            n.netstats = nets;
            n.nnetstats = 1;
            return load(v, &n, t);
        }
        case PMIX_DATA_BUFFER: {
            pmix_data_buffer_t b;
            PMIX_DATA_BUFFER_CONSTRUCT(&b);
            int32_t x = 31337;
            PMIx_Data_pack(nullptr, &b, &x, 1, PMIX_INT32);
            load(v, &b, t);
            PMIX_DATA_BUFFER_DESTRUCT(&b);
            return;
        }
        case PMIX_STOR_MEDIUM:
            return load_num<pmix_storage_medium_t>(v, PMIX_STORAGE_MEDIUM_SSD, t);
        case PMIX_STOR_ACCESS:
            return load_num<pmix_storage_accessibility_t>(v, PMIX_STORAGE_ACCESSIBILITY_JOB, t);
        case PMIX_STOR_PERSIST:
            return load_num<pmix_storage_persistence_t>(v, PMIX_STORAGE_PERSISTENCE_SCRATCH, t);
        case PMIX_STOR_ACCESS_TYPE:
            return load_num<pmix_storage_access_type_t>(v, PMIX_STORAGE_ACCESS_RDWR, t);
        default:
            throw std::runtime_error("no sample for data type " + std::to_string(t));
    }
}

}  // namespace samples
