// The field layout of every PMIx data type, written once.
//
// Each struct is described by one `visit(V&, T&)` function that names its
// fields in wire order. A visitor V decides what happens to each field: the
// Encoder writes it, the Decoder reads it (allocating with malloc, because the
// C API hands the result to callers who free() it), the Destroyer frees it and
// the Printer formats it. Adding a data type means adding one visit() and one
// case in visit_typed(); the four operations follow.
//
// A visitor provides:
//   num(T&)                 arithmetic field (bool, ints, float, double, enums)
//   str(char*&)             malloc'd NUL-terminated string, may be NULL
//   fixed(char*, cap)       char[cap] field (key, nspace), always NUL-terminated
//   bytes(char*&, size_t&)  malloc'd byte block and its size
//   argv(char**&)           NULL-terminated malloc'd array of strings
//   array(T*&, size_t&)     malloc'd array of n structs of a static type
//   typed_array(t, void*&, size_t&)  malloc'd array of n elements of type t
//   boxed(t, void*&)        pointer to one malloc'd element of type t
//   type_tag(pmix_data_type_t&)     a type field that selects what follows
//   pointer(void*&), topology(pmix_topology_t&), cpuset(pmix_cpuset_t&),
//   buffer(pmix_data_buffer_t&)     the types with their own representation
//   ok()                    false once the visitor has failed (stop early)
#pragma once

#include <sys/time.h>

#include <cstddef>
#include <type_traits>

#include "pmix_common.h"

namespace pmixpp::wire {

// Size in memory of one element of type t as it sits in an array passed to
// PMIx_Data_pack (char* for PMIX_STRING); 0 for types we cannot handle.
std::size_t element_size(pmix_data_type_t t) noexcept;

// True when a pmix_value_t of this type holds a pointer to one malloc'd
// element (data.proc, data.darray, ...) rather than the element itself.
bool value_is_boxed(pmix_data_type_t t) noexcept;

template <class V>
void visit_typed(V &v, pmix_data_type_t t, void *elem);

template <class V, class T>
requires std::is_arithmetic_v<T>
void visit(V &v, T &x) {
    v.num(x);
}

template <class V>
void visit(V &v, timeval &tv) {
    v.num(tv.tv_sec);
    v.num(tv.tv_usec);
}

template <class V>
void visit(V &v, pmix_proc_t &p) {
    v.fixed(p.nspace, sizeof p.nspace);
    v.num(p.rank);
}

template <class V>
void visit(V &v, pmix_byte_object_t &bo) {
    v.bytes(bo.bytes, bo.size);
}

template <class V>
void visit(V &v, pmix_value_t &val) {
    v.type_tag(val.type);
    if (!v.ok() || val.type == PMIX_UNDEF) return;
    if (value_is_boxed(val.type)) {
        v.boxed(val.type, val.data.ptr);
    } else {
        visit_typed(v, val.type, &val.data);
    }
}

template <class V>
void visit(V &v, pmix_info_t &i) {
    v.fixed(i.key, sizeof i.key);
    v.num(i.flags);
    // A decoded value is always the info's own: a sender's PMIX_INFO_PERSISTENT
    // (found by fuzz_frame / fuzz_handshake) would make every release skip it.
    if constexpr (requires { V::kAllocates; }) {
        i.flags &= ~static_cast<pmix_info_directives_t>(PMIX_INFO_PERSISTENT);
    }
    // PMIX_INFO_PERSISTENT: the info does not own its value (header macro rule).
    if constexpr (requires { V::kReleasesMemory; }) {
        if (i.flags & PMIX_INFO_PERSISTENT) return;
    }
    visit(v, i.value);
}

template <class V>
void visit(V &v, pmix_pdata_t &p) {
    visit(v, p.proc);
    v.fixed(p.key, sizeof p.key);
    visit(v, p.value);
}

template <class V>
void visit(V &v, pmix_app_t &a) {
    v.str(a.cmd);
    v.argv(a.argv);
    v.argv(a.env);
    v.str(a.cwd);
    v.num(a.maxprocs);
    v.array(a.info, a.ninfo);
}

template <class V>
void visit(V &v, pmix_proc_info_t &p) {
    visit(v, p.proc);
    v.str(p.hostname);
    v.str(p.executable_name);
    v.num(p.pid);
    v.num(p.exit_code);
    v.num(p.state);
}

template <class V>
void visit(V &v, pmix_data_array_t &d) {
    v.type_tag(d.type);
    if (!v.ok()) return;
    v.typed_array(d.type, d.array, d.size);
}

template <class V>
void visit(V &v, pmix_query_t &q) {
    v.argv(q.keys);
    v.array(q.qualifiers, q.nqual);
}

template <class V>
void visit(V &v, pmix_envar_t &e) {
    v.str(e.envar);
    v.str(e.value);
    v.num(e.separator);
}

template <class V>
void visit(V &v, pmix_coord_t &c) {
    v.num(c.view);
    v.array(c.coord, c.dims);
}

template <class V>
void visit(V &v, pmix_regattr_t &r) {
    v.str(r.name);
    v.fixed(r.string, sizeof r.string);
    v.num(r.type);  // describes the attribute; no payload follows
    v.argv(r.description);
}

template <class V>
void visit(V &v, pmix_geometry_t &g) {
    v.num(g.fabric);
    v.str(g.uuid);
    v.str(g.osname);
    v.array(g.coordinates, g.ncoords);
}

template <class V>
void visit(V &v, pmix_device_distance_t &d) {
    v.str(d.uuid);
    v.str(d.osname);
    v.num(d.type);
    v.num(d.mindist);
    v.num(d.maxdist);
}

template <class V>
void visit(V &v, pmix_endpoint_t &e) {
    v.str(e.uuid);
    v.str(e.osname);
    visit(v, e.endpt);
}

template <class V>
void visit(V &v, pmix_proc_stats_t &s) {
    v.str(s.node);
    visit(v, s.proc);
    v.num(s.pid);
    v.str(s.cmd);
    v.num(s.state);
    visit(v, s.time);
    v.num(s.percent_cpu);
    v.num(s.priority);
    v.num(s.num_threads);
    v.num(s.pss);
    v.num(s.vsize);
    v.num(s.rss);
    v.num(s.peak_vsize);
    v.num(s.processor);
    visit(v, s.sample_time);
}

template <class V>
void visit(V &v, pmix_disk_stats_t &s) {
    v.str(s.disk);
    v.num(s.num_reads_completed);
    v.num(s.num_reads_merged);
    v.num(s.num_sectors_read);
    v.num(s.milliseconds_reading);
    v.num(s.num_writes_completed);
    v.num(s.num_writes_merged);
    v.num(s.num_sectors_written);
    v.num(s.milliseconds_writing);
    v.num(s.num_ios_in_progress);
    v.num(s.milliseconds_io);
    v.num(s.weighted_milliseconds_io);
}

template <class V>
void visit(V &v, pmix_net_stats_t &s) {
    v.str(s.net_interface);
    v.num(s.num_bytes_recvd);
    v.num(s.num_packets_recvd);
    v.num(s.num_recv_errs);
    v.num(s.num_bytes_sent);
    v.num(s.num_packets_sent);
    v.num(s.num_send_errs);
}

template <class V>
void visit(V &v, pmix_node_stats_t &s) {
    v.str(s.node);
    v.num(s.la);
    v.num(s.la5);
    v.num(s.la15);
    v.num(s.total_mem);
    v.num(s.free_mem);
    v.num(s.buffers);
    v.num(s.cached);
    v.num(s.swap_cached);
    v.num(s.swap_total);
    v.num(s.swap_free);
    v.num(s.mapped);
    visit(v, s.sample_time);
    v.array(s.diskstats, s.ndiskstats);
    v.array(s.netstats, s.nnetstats);
}

// One element of dynamic type t at `elem`. Unknown or unsupported types make
// the visitor fail with PMIX_ERR_UNKNOWN_DATA_TYPE.
template <class V>
void visit_typed(V &v, pmix_data_type_t t, void *elem) {
    switch (t) {
        case PMIX_BOOL:
            return visit(v, *static_cast<bool *>(elem));
        case PMIX_BYTE:
            return visit(v, *static_cast<uint8_t *>(elem));
        case PMIX_STRING:
            return v.str(*static_cast<char **>(elem));
        case PMIX_SIZE:
            return visit(v, *static_cast<size_t *>(elem));
        case PMIX_PID:
            return visit(v, *static_cast<pid_t *>(elem));
        case PMIX_INT:
            return visit(v, *static_cast<int *>(elem));
        case PMIX_INT8:
            return visit(v, *static_cast<int8_t *>(elem));
        case PMIX_INT16:
            return visit(v, *static_cast<int16_t *>(elem));
        case PMIX_INT32:
            return visit(v, *static_cast<int32_t *>(elem));
        case PMIX_INT64:
            return visit(v, *static_cast<int64_t *>(elem));
        case PMIX_UINT:
            return visit(v, *static_cast<unsigned int *>(elem));
        case PMIX_UINT8:
            return visit(v, *static_cast<uint8_t *>(elem));
        case PMIX_UINT16:
            return visit(v, *static_cast<uint16_t *>(elem));
        case PMIX_UINT32:
            return visit(v, *static_cast<uint32_t *>(elem));
        case PMIX_UINT64:
            return visit(v, *static_cast<uint64_t *>(elem));
        case PMIX_FLOAT:
            return visit(v, *static_cast<float *>(elem));
        case PMIX_DOUBLE:
            return visit(v, *static_cast<double *>(elem));
        case PMIX_TIMEVAL:
            return visit(v, *static_cast<timeval *>(elem));
        case PMIX_TIME:
            return visit(v, *static_cast<time_t *>(elem));
        case PMIX_STATUS:
            return visit(v, *static_cast<pmix_status_t *>(elem));
        case PMIX_VALUE:
            return visit(v, *static_cast<pmix_value_t *>(elem));
        case PMIX_PROC:
            return visit(v, *static_cast<pmix_proc_t *>(elem));
        case PMIX_APP:
            return visit(v, *static_cast<pmix_app_t *>(elem));
        case PMIX_INFO:
            return visit(v, *static_cast<pmix_info_t *>(elem));
        case PMIX_PDATA:
            return visit(v, *static_cast<pmix_pdata_t *>(elem));
        case PMIX_BYTE_OBJECT:
        case PMIX_COMPRESSED_STRING:
        case PMIX_REGEX:
        case PMIX_COMPRESSED_BYTE_OBJECT:
            return visit(v, *static_cast<pmix_byte_object_t *>(elem));
        case PMIX_PERSIST:
            return visit(v, *static_cast<pmix_persistence_t *>(elem));
        case PMIX_POINTER:
            return v.pointer(*static_cast<void **>(elem));
        case PMIX_SCOPE:
            return visit(v, *static_cast<pmix_scope_t *>(elem));
        case PMIX_DATA_RANGE:
            return visit(v, *static_cast<pmix_data_range_t *>(elem));
        case PMIX_COMMAND:
            return visit(v, *static_cast<uint8_t *>(elem));
        case PMIX_INFO_DIRECTIVES:
            return visit(v, *static_cast<pmix_info_directives_t *>(elem));
        case PMIX_DATA_TYPE:
            return visit(v, *static_cast<pmix_data_type_t *>(elem));
        case PMIX_PROC_STATE:
            return visit(v, *static_cast<pmix_proc_state_t *>(elem));
        case PMIX_PROC_INFO:
            return visit(v, *static_cast<pmix_proc_info_t *>(elem));
        case PMIX_DATA_ARRAY:
            return visit(v, *static_cast<pmix_data_array_t *>(elem));
        case PMIX_PROC_RANK:
            return visit(v, *static_cast<pmix_rank_t *>(elem));
        case PMIX_QUERY:
            return visit(v, *static_cast<pmix_query_t *>(elem));
        case PMIX_ALLOC_DIRECTIVE:
            return visit(v, *static_cast<pmix_alloc_directive_t *>(elem));
        case PMIX_IOF_CHANNEL:
            return visit(v, *static_cast<pmix_iof_channel_t *>(elem));
        case PMIX_ENVAR:
            return visit(v, *static_cast<pmix_envar_t *>(elem));
        case PMIX_COORD:
            return visit(v, *static_cast<pmix_coord_t *>(elem));
        case PMIX_REGATTR:
            return visit(v, *static_cast<pmix_regattr_t *>(elem));
        case PMIX_JOB_STATE:
            return visit(v, *static_cast<pmix_job_state_t *>(elem));
        case PMIX_LINK_STATE:
            return visit(v, *static_cast<pmix_link_state_t *>(elem));
        case PMIX_PROC_CPUSET:
            return v.cpuset(*static_cast<pmix_cpuset_t *>(elem));
        case PMIX_GEOMETRY:
            return visit(v, *static_cast<pmix_geometry_t *>(elem));
        case PMIX_DEVICE_DIST:
            return visit(v, *static_cast<pmix_device_distance_t *>(elem));
        case PMIX_ENDPOINT:
            return visit(v, *static_cast<pmix_endpoint_t *>(elem));
        case PMIX_TOPO:
            return v.topology(*static_cast<pmix_topology_t *>(elem));
        case PMIX_DEVTYPE:
            return visit(v, *static_cast<pmix_device_type_t *>(elem));
        case PMIX_LOCTYPE:
            return visit(v, *static_cast<pmix_locality_t *>(elem));
        case PMIX_PROC_NSPACE:
            return v.fixed(*static_cast<pmix_nspace_t *>(elem), sizeof(pmix_nspace_t));
        case PMIX_PROC_STATS:
            return visit(v, *static_cast<pmix_proc_stats_t *>(elem));
        case PMIX_DISK_STATS:
            return visit(v, *static_cast<pmix_disk_stats_t *>(elem));
        case PMIX_NET_STATS:
            return visit(v, *static_cast<pmix_net_stats_t *>(elem));
        case PMIX_NODE_STATS:
            return visit(v, *static_cast<pmix_node_stats_t *>(elem));
        case PMIX_DATA_BUFFER:
            return v.buffer(*static_cast<pmix_data_buffer_t *>(elem));
        case PMIX_STOR_MEDIUM:
            return visit(v, *static_cast<pmix_storage_medium_t *>(elem));
        case PMIX_STOR_ACCESS:
            return visit(v, *static_cast<pmix_storage_accessibility_t *>(elem));
        case PMIX_STOR_PERSIST:
            return visit(v, *static_cast<pmix_storage_persistence_t *>(elem));
        case PMIX_STOR_ACCESS_TYPE:
            return visit(v, *static_cast<pmix_storage_access_type_t *>(elem));
        default:
            return v.fail(PMIX_ERR_UNKNOWN_DATA_TYPE);
    }
}

}  // namespace pmixpp::wire
