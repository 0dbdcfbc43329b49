// HashStore: registration parsing, Put/Commit, realm-aware lookups, blobs.
#include "hash_store.hpp"

#include "blob_format.hpp"
#include "pmixpp/mca/info.hpp"

#include <pmix.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <deque>
#include <memory>
#include <utility>

namespace pmixpp::gds_hash {

using mca::as_u32;
using mca::find_info;
using mca::info_key;
using mca::info_members;
using mca::KeyValueSink;
using mca::Result;
using mca::Status;
using mca::gds::Blob;
using mca::gds::ValueSink;

// --- OwnedValue ---------------------------------------------------------------

OwnedValue::~OwnedValue() {
    reset();
}

OwnedValue::OwnedValue(OwnedValue &&other) noexcept : value_(other.value_) {
    other.value_ = pmix_value_t{};
}

OwnedValue &OwnedValue::operator=(OwnedValue &&other) noexcept {
    if (this != &other) {
        reset();
        value_ = other.value_;
        other.value_ = pmix_value_t{};
    }
    return *this;
}

pmix_status_t OwnedValue::copy_from(const pmix_value_t &src) {
    reset();
    const pmix_status_t rc = PMIx_Value_xfer(&value_, &src);
    if (rc != PMIX_SUCCESS) reset();
    return rc;
}

void OwnedValue::adopt(pmix_value_t &src) noexcept {
    reset();
    value_ = src;
    src = pmix_value_t{};
}

void OwnedValue::reset() noexcept {
    if (value_.type != PMIX_UNDEF) PMIx_Value_destruct(&value_);
    value_ = pmix_value_t{};
}

namespace {

// Realm qualifiers of PMIx_Get (Chap_API_Reserved_Keys, "Data realms").
constexpr std::string_view kSessionInfo = PMIX_SESSION_INFO;
constexpr std::string_view kJobInfo = PMIX_JOB_INFO;
constexpr std::string_view kAppInfo = PMIX_APP_INFO;
constexpr std::string_view kNodeInfo = PMIX_NODE_INFO;
constexpr std::string_view kProcInfo = "pmix.proc.info";  // PMIX_PROC_INFO is a type in 4.2

bool is_job_rank(pmix_rank_t rank) noexcept {
    return rank == PMIX_RANK_WILDCARD || rank == PMIX_RANK_UNDEF;
}

// Keys the standard reserves ("pmix." prefix) are looked up across realms
// (process -> app -> node -> job -> session); user keys only where put.
bool is_reserved(std::string_view key) noexcept {
    return key.starts_with("pmix.");
}

std::string_view nspace_of(const pmix_proc_t &proc) noexcept {
    return bounded(proc.nspace, sizeof(proc.nspace));
}

std::string_view as_string(const pmix_value_t &v) noexcept {
    if (v.type != PMIX_STRING || v.data.string == nullptr) return {};
    return v.data.string;
}

// A bool qualifier counts when true; one of another type by its presence.
bool flag_set(const pmix_value_t &v) noexcept {
    return v.type != PMIX_BOOL || v.data.flag;
}

const pmix_value_t *lookup(const Table *table, std::string_view key) noexcept {
    if (table == nullptr) return nullptr;
    const auto it = table->find(key);
    return it == table->end() ? nullptr : &it->second.value.get();
}

Status bad_param(std::string message) {
    return Status(PMIX_ERR_BAD_PARAM, "gds_hash: " + std::move(message));
}

// --- registration -------------------------------------------------------------

NodeRecord *find_node(std::vector<NodeRecord> &nodes, std::optional<std::uint32_t> nodeid,
                      std::string_view hostname) {
    for (auto &node : nodes) {
        if (nodeid && node.nodeid && *node.nodeid == *nodeid) return &node;
        if (!hostname.empty() && node.hostname == hostname) return &node;
    }
    return nullptr;
}

// Turns a PMIx_server_register_nspace info array into a Registration.
class RegistrationParser {
  public:
    explicit RegistrationParser(Registration &out) : out_(out) {}

    // A top-level entry, or a member of a PMIX_JOB_INFO_ARRAY.
    Status job_item(const pmix_info_t &info) {
        const std::string_view key = info_key(info);
        if (key == PMIX_SESSION_INFO_ARRAY) return session_array(info);
        if (key == PMIX_JOB_INFO_ARRAY) {
            auto members = array_of(info);
            if (!members) return members.status();
            for (const auto &m : members.value()) {
                if (auto st = job_item(m); !st.ok()) return st;
            }
            return Status::success();
        }
        if (key == PMIX_APP_INFO_ARRAY) return app_array(info);
        if (key == PMIX_NODE_INFO_ARRAY) return node_array(info);
        if (key == PMIX_PROC_INFO_ARRAY) return proc_array(info);
        if (key == PMIX_SESSION_ID) {
            auto id = as_u32(info.value);
            if (!id) return bad_param("PMIX_SESSION_ID is not an unsigned 32-bit integer");
            out_.job.session = *id;
        }
        return put(out_.job.values, info);
    }

  private:
    Result<std::span<const pmix_info_t>> array_of(const pmix_info_t &info) {
        auto members = info_members(info.value);
        if (!members) {
            return bad_param(std::string(info_key(info)) +
                             " must be a PMIX_DATA_ARRAY of PMIX_INFO");
        }
        return *members;
    }

    static Status put(Table &table, const pmix_info_t &info) {
        const std::string_view key = info_key(info);
        if (key.empty()) return bad_param("registration info with an empty key");
        Entry entry;
        entry.registered = true;
        entry.scope = PMIX_GLOBAL;
        const pmix_status_t rc = entry.value.copy_from(info.value);
        if (rc != PMIX_SUCCESS) {
            return Status(PMIX_ERR_BAD_PARAM, "gds_hash: cannot store " + std::string(key) + ": " +
                                                  PMIx_Error_string(rc));
        }
        table.insert_or_assign(std::string(key), std::move(entry));
        return Status::success();
    }

    static Status put_all(Table &table, std::span<const pmix_info_t> members) {
        for (const auto &m : members) {
            if (auto st = put(table, m); !st.ok()) return st;
        }
        return Status::success();
    }

    Status session_array(const pmix_info_t &info) {
        auto members = array_of(info);
        if (!members) return members.status();
        const pmix_info_t *id_info = find_info(members.value(), PMIX_SESSION_ID);
        const auto id = id_info ? as_u32(id_info->value) : std::nullopt;
        if (!id) return bad_param("PMIX_SESSION_INFO_ARRAY without a PMIX_SESSION_ID (uint32)");
        if (!out_.job.session) out_.job.session = *id;
        return put_all(out_.sessions[*id], members.value());
    }

    Status app_array(const pmix_info_t &info) {
        auto members = array_of(info);
        if (!members) return members.status();
        const pmix_info_t *num_info = find_info(members.value(), PMIX_APPNUM);
        const auto appnum = num_info ? as_u32(num_info->value) : std::nullopt;
        if (!appnum) return bad_param("PMIX_APP_INFO_ARRAY without a PMIX_APPNUM (uint32)");
        return put_all(out_.job.apps[*appnum], members.value());
    }

    Status node_array(const pmix_info_t &info) {
        auto members = array_of(info);
        if (!members) return members.status();
        std::optional<std::uint32_t> nodeid;
        if (const pmix_info_t *m = find_info(members.value(), PMIX_NODEID)) {
            nodeid = as_u32(m->value);
            if (!nodeid) return bad_param("PMIX_NODEID in PMIX_NODE_INFO_ARRAY is not a uint32");
        }
        std::string_view hostname;
        if (const pmix_info_t *m = find_info(members.value(), PMIX_HOSTNAME)) {
            hostname = as_string(m->value);
            if (hostname.empty())
                return bad_param("PMIX_HOSTNAME in PMIX_NODE_INFO_ARRAY is empty");
        }
        if (!nodeid && hostname.empty()) {
            return bad_param("PMIX_NODE_INFO_ARRAY without PMIX_NODEID or PMIX_HOSTNAME");
        }
        NodeRecord *node = find_node(out_.job.nodes, nodeid, hostname);
        if (node == nullptr) node = &out_.job.nodes.emplace_back();
        if (nodeid) node->nodeid = nodeid;
        if (!hostname.empty()) node->hostname = std::string(hostname);
        return put_all(node->values, members.value());
    }

    Status proc_array(const pmix_info_t &info) {
        auto members = array_of(info);
        if (!members) return members.status();
        std::optional<std::uint32_t> rank;
        if (const pmix_info_t *m = find_info(members.value(), PMIX_RANK)) {
            rank = as_u32(m->value);
        } else if (const pmix_info_t *p = find_info(members.value(), PMIX_PROCID)) {
            if (p->value.type == PMIX_PROC && p->value.data.proc != nullptr) {
                rank = p->value.data.proc->rank;
            }
        }
        if (!rank || *rank >= PMIX_RANK_VALID) {
            return bad_param("PMIX_PROC_INFO_ARRAY without a valid PMIX_RANK");
        }
        return put_all(out_.job.procs[*rank], members.value());
    }

    Registration &out_;
};

// The job's map index, from its PMIX_NODE_MAP and PMIX_PROC_MAP (rebuilt at
// every registration: either map may have changed).
void index_maps(JobRecord &job) {
    const pmix_value_t *nodes = lookup(&job.values, PMIX_NODE_MAP);
    const pmix_value_t *procs = lookup(&job.values, PMIX_PROC_MAP);
    job.maps.reset();
    if (nodes == nullptr || procs == nullptr) return;
    job.maps = mca::maps::MapIndex::build(as_string(*nodes), as_string(*procs));
}

void merge_table(Table &into, Table &&from) {
    for (auto &[key, entry] : from) into.insert_or_assign(key, std::move(entry));
}

// --- building info arrays that borrow stored values (for blobs and fetch_all) --

// Holds the storage of borrowed infos: values are bitwise copies of stored
// values (never destructed), arrays point into `lists` / `arrays`.
class BorrowedInfos {
  public:
    static pmix_info_t info(std::string_view key, const pmix_value_t &value) {
        pmix_info_t i{};
        std::memcpy(i.key, key.data(), std::min<std::size_t>(key.size(), PMIX_MAX_KEYLEN));
        i.value = value;
        return i;
    }

    std::vector<pmix_info_t> &new_list() { return lists_.emplace_back(); }

    // An info `key` whose value is a PMIX_DATA_ARRAY over `list`.
    pmix_info_t array_info(std::string_view key, std::vector<pmix_info_t> &list) {
        pmix_data_array_t &array = arrays_.emplace_back();
        array.type = PMIX_INFO;
        array.size = list.size();
        array.array = list.data();
        pmix_value_t v{};
        v.type = PMIX_DATA_ARRAY;
        v.data.darray = &array;
        return info(key, v);
    }

    // Table entries, except `skip` and (unless `internal`) PMIX_INTERNAL ones.
    static void add_table(std::vector<pmix_info_t> &list, const Table &table, bool registered_only,
                          std::string_view skip = {}) {
        for (const auto &[key, entry] : table) {
            if (entry.scope == PMIX_INTERNAL || key == skip) continue;
            if (registered_only && !entry.registered) continue;
            list.push_back(info(key, entry.value.get()));
        }
    }

    pmix_info_t session_info(std::uint32_t id, const Table &table) {
        auto &list = new_list();
        pmix_value_t idv{};
        idv.type = PMIX_UINT32;
        idv.data.uint32 = id;
        list.push_back(info(PMIX_SESSION_ID, idv));
        add_table(list, table, false, PMIX_SESSION_ID);
        return array_info(PMIX_SESSION_INFO_ARRAY, list);
    }

    pmix_info_t app_info(std::uint32_t appnum, const Table &table) {
        auto &list = new_list();
        pmix_value_t num{};
        num.type = PMIX_UINT32;
        num.data.uint32 = appnum;
        list.push_back(info(PMIX_APPNUM, num));
        add_table(list, table, false, PMIX_APPNUM);
        return array_info(PMIX_APP_INFO_ARRAY, list);
    }

    pmix_info_t node_info(const NodeRecord &node) {
        auto &list = new_list();
        add_table(list, node.values, false);
        return array_info(PMIX_NODE_INFO_ARRAY, list);
    }

  private:
    std::deque<std::vector<pmix_info_t>> lists_;  // deque: references stay valid
    std::deque<pmix_data_array_t> arrays_;
};

}  // namespace

// --- HashStore ------------------------------------------------------------------

struct HashStore::Qualifiers {
    bool session = false, job = false, app = false, node = false, proc = false;
    std::optional<std::uint32_t> session_id, appnum, nodeid;
    std::string_view hostname;

    explicit Qualifiers(std::span<const pmix_info_t> infos) {
        for (const auto &q : infos) {
            const std::string_view key = info_key(q);
            if (key == PMIX_SESSION_ID)
                session_id = as_u32(q.value);
            else if (key == PMIX_APPNUM)
                appnum = as_u32(q.value);
            else if (key == PMIX_NODEID)
                nodeid = as_u32(q.value);
            else if (key == PMIX_HOSTNAME)
                hostname = as_string(q.value);
            else if (key == kSessionInfo)
                session = flag_set(q.value);
            else if (key == kJobInfo)
                job = flag_set(q.value);
            else if (key == kAppInfo)
                app = flag_set(q.value);
            else if (key == kNodeInfo)
                node = flag_set(q.value);
            else if (key == kProcInfo)
                proc = flag_set(q.value);
            // Others (PMIX_OPTIONAL, PMIX_IMMEDIATE, PMIX_TIMEOUT, ...) are the core's.
        }
    }
    bool names_node() const noexcept { return nodeid.has_value() || !hostname.empty(); }
};

HashStore::HashStore(std::string local_hostname) : local_hostname_(std::move(local_hostname)) {}

const JobRecord *HashStore::find_job(std::string_view nspace) const {
    const auto it = jobs_.find(nspace);
    return it == jobs_.end() ? nullptr : &it->second;
}

JobRecord &HashStore::job_for(std::string_view nspace) {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end()) it = jobs_.emplace(std::string(nspace), JobRecord{}).first;
    return it->second;
}

Table &HashStore::table_for(const pmix_proc_t &proc) {
    JobRecord &job = job_for(nspace_of(proc));
    return is_job_rank(proc.rank) ? job.values : job.procs[proc.rank];
}

const Table *HashStore::find_table(const pmix_proc_t &proc) const {
    const JobRecord *job = find_job(nspace_of(proc));
    if (job == nullptr) return nullptr;
    if (is_job_rank(proc.rank)) return &job->values;
    const auto it = job->procs.find(proc.rank);
    return it == job->procs.end() ? nullptr : &it->second;
}

void HashStore::merge(std::string_view nspace, Registration &&reg) {
    JobRecord &job = job_for(nspace);
    merge_table(job.values, std::move(reg.job.values));
    if (reg.job.session) job.session = reg.job.session;
    for (auto &[appnum, table] : reg.job.apps) merge_table(job.apps[appnum], std::move(table));
    for (auto &node : reg.job.nodes) {
        NodeRecord *into = find_node(job.nodes, node.nodeid, node.hostname);
        if (into == nullptr) {
            job.nodes.push_back(std::move(node));
            continue;
        }
        if (node.nodeid) into->nodeid = node.nodeid;
        if (!node.hostname.empty()) into->hostname = std::move(node.hostname);
        merge_table(into->values, std::move(node.values));
    }
    for (auto &[rank, table] : reg.job.procs) merge_table(job.procs[rank], std::move(table));
    for (auto &[id, table] : reg.sessions) merge_table(sessions_[id], std::move(table));
    index_maps(job);
}

Status HashStore::register_job(std::string_view nspace, std::span<const pmix_info_t> info) {
    if (nspace.empty() || nspace.size() > PMIX_MAX_NSLEN) {
        return bad_param("register_job: empty or overlong nspace");
    }
    Registration reg;
    RegistrationParser parser(reg);
    for (const auto &item : info) {
        if (auto st = parser.job_item(item); !st.ok()) return st;
    }
    merge(nspace, std::move(reg));
    return Status::success();
}

Status HashStore::store(const pmix_proc_t &proc, pmix_scope_t scope, std::string_view key,
                        const pmix_value_t &value) {
    if (key.empty() || key.size() > PMIX_MAX_KEYLEN)
        return bad_param("store: empty or overlong key");
    if (scope != PMIX_LOCAL && scope != PMIX_REMOTE && scope != PMIX_GLOBAL &&
        scope != PMIX_INTERNAL) {
        return bad_param("store: scope " + std::to_string(scope) + " for key " + std::string(key) +
                         " is not LOCAL, REMOTE, GLOBAL or INTERNAL");
    }
    if (nspace_of(proc).empty()) return bad_param("store: empty nspace");
    Entry entry;
    entry.scope = scope;
    const pmix_status_t rc = entry.value.copy_from(value);
    if (rc != PMIX_SUCCESS) {
        return Status(rc == PMIX_ERR_NOMEM ? rc : PMIX_ERR_BAD_PARAM,
                      "gds_hash: cannot store " + std::string(key) + ": " + PMIx_Error_string(rc));
    }
    table_for(proc).insert_or_assign(std::string(key), std::move(entry));
    return Status::success();
}

Status HashStore::commit(const pmix_proc_t &proc) {
    // find_table() is the const lookup; nothing is created for a process that
    // put nothing (its modex is empty).
    auto *table = const_cast<Table *>(find_table(proc));
    if (table == nullptr) return Status::success();
    for (auto &[key, entry] : *table) {
        if (!entry.registered) entry.committed = true;
    }
    return Status::success();
}

Status HashStore::store_modex(const pmix_proc_t &proc, std::span<const std::byte> blob) {
    auto items = read_modex_blob(blob);
    if (!items) return items.status();
    if (items.value().empty()) return Status::success();
    if (nspace_of(proc).empty()) return bad_param("store_modex: empty nspace");
    Table &table = table_for(proc);
    for (auto &item : items.value()) {
        Entry entry;
        entry.value = std::move(item.value);
        entry.scope = item.scope;
        entry.committed = true;
        table.insert_or_assign(std::move(item.key), std::move(entry));
    }
    return Status::success();
}

Status HashStore::store_job(std::string_view nspace, std::span<const std::byte> blob) {
    if (nspace.empty() || nspace.size() > PMIX_MAX_NSLEN) {
        return bad_param("store_job: empty or overlong nspace");
    }
    auto infos = read_job_blob(blob);
    if (!infos) return infos.status();
    Registration reg;
    RegistrationParser parser(reg);
    for (const auto &item : infos.value().span()) {
        if (auto st = parser.job_item(item); !st.ok()) {
            return Status(PMIX_ERR_UNPACK_FAILURE,
                          "gds_hash: cannot read job blob: " + st.message());
        }
    }
    merge(nspace, std::move(reg));
    return Status::success();
}

Status HashStore::delete_job(std::string_view nspace) {
    const auto it = jobs_.find(nspace);
    if (it != jobs_.end()) jobs_.erase(it);
    return Status::success();
}

// --- readers ----------------------------------------------------------------------

const Table *HashStore::session_of(const JobRecord *job, const Qualifiers &q) const {
    std::optional<std::uint32_t> id = q.session_id;
    if (!id && job != nullptr) id = job->session;
    if (!id) return nullptr;
    const auto it = sessions_.find(*id);
    return it == sessions_.end() ? nullptr : &it->second;
}

const Table *HashStore::app_of(const JobRecord &job, pmix_rank_t rank,
                               std::optional<std::uint32_t> appnum) const {
    if (job.apps.empty()) return nullptr;
    if (!appnum && !is_job_rank(rank)) {
        const auto proc = job.procs.find(rank);
        if (proc != job.procs.end()) {
            if (const pmix_value_t *v = lookup(&proc->second, PMIX_APPNUM)) appnum = as_u32(*v);
        }
    }
    // The standard's default for a rank-less request is app 0; a job of one
    // app answers for it whatever its number.
    if (!appnum) appnum = job.apps.size() == 1 ? job.apps.begin()->first : 0;
    const auto it = job.apps.find(*appnum);
    return it == job.apps.end() ? nullptr : &it->second;
}

const NodeRecord *HashStore::node_of(const JobRecord &job, pmix_rank_t rank,
                                     const Qualifiers &q) const {
    auto find = [&](std::optional<std::uint32_t> id, std::string_view host) -> const NodeRecord * {
        for (const auto &node : job.nodes) {
            if (id && node.nodeid && *node.nodeid == *id) return &node;
            if (!host.empty() && node.hostname == host) return &node;
        }
        return nullptr;
    };
    if (q.names_node()) return find(q.nodeid, q.hostname);
    if (!is_job_rank(rank)) {
        const auto proc = job.procs.find(rank);
        if (proc != job.procs.end()) {
            const pmix_value_t *id = lookup(&proc->second, PMIX_NODEID);
            const pmix_value_t *host = lookup(&proc->second, PMIX_HOSTNAME);
            if (id != nullptr || host != nullptr) {
                return find(id ? as_u32(*id) : std::nullopt, host ? as_string(*host) : "");
            }
        }
        // Where the maps put it.
        if (job.maps) {
            if (const auto place = job.maps->place(rank))
                return find(std::nullopt, job.maps->node_name(place->node));
        }
    }
    // The local node.
    if (job.nodes.size() == 1) return &job.nodes.front();
    if (local_hostname_.empty()) return nullptr;
    for (const auto &node : job.nodes) {
        if (node.hostname == local_hostname_) return &node;
    }
    return nullptr;
}

std::optional<std::uint32_t> HashStore::map_node(const JobRecord &job, pmix_rank_t rank,
                                                 const Qualifiers &q) const {
    if (!job.maps) return std::nullopt;
    if (!q.hostname.empty()) return job.maps->node_named(q.hostname);
    if (q.nodeid) {
        for (const auto &node : job.nodes) {
            if (node.nodeid && *node.nodeid == *q.nodeid && !node.hostname.empty())
                return job.maps->node_named(node.hostname);
        }
        if (*q.nodeid < job.maps->num_nodes()) return *q.nodeid;
        return std::nullopt;
    }
    if (is_job_rank(rank)) return job.maps->node_named(local_hostname_);
    const auto place = job.maps->place(rank);
    if (!place) return std::nullopt;
    return place->node;
}

std::uint32_t HashStore::map_nodeid(const JobRecord &job, std::uint32_t node) const {
    const std::string &name = job.maps->node_name(node);
    for (const auto &record : job.nodes) {
        if (record.nodeid && record.hostname == name) return *record.nodeid;
    }
    return node;
}

const pmix_value_t *HashStore::rank_from_maps(const JobRecord &job, pmix_rank_t rank,
                                              std::string_view key, Derived &out) const {
    if (!job.maps || is_job_rank(rank)) return nullptr;
    const bool wanted = key == PMIX_HOSTNAME || key == PMIX_NODEID || key == PMIX_LOCAL_RANK ||
                        key == PMIX_NODE_RANK;
    if (!wanted) return nullptr;
    const auto place = job.maps->place(rank);
    if (!place) return nullptr;
    if (key == PMIX_LOCAL_RANK || key == PMIX_NODE_RANK) {
        // Both are 16-bit in the standard; one job per node as the maps say.
        if (place->local_rank > UINT16_MAX) return nullptr;
        out.value.type = PMIX_UINT16;
        out.value.data.uint16 = static_cast<std::uint16_t>(place->local_rank);
        return &out.value;
    }
    return node_from_maps(job, place->node, key, out);
}

const pmix_value_t *HashStore::node_from_maps(const JobRecord &job,
                                              std::optional<std::uint32_t> node,
                                              std::string_view key, Derived &out) const {
    if (!job.maps || !node) return nullptr;
    if (key == PMIX_HOSTNAME) {
        // Borrowed from the index: the sink copies it under the reader lock.
        out.value.type = PMIX_STRING;
        out.value.data.string = const_cast<char *>(job.maps->node_name(*node).c_str());
    } else if (key == PMIX_NODEID) {
        out.value.type = PMIX_UINT32;
        out.value.data.uint32 = map_nodeid(job, *node);
    } else if (key == PMIX_LOCAL_SIZE) {
        out.value.type = PMIX_UINT32;
        out.value.data.uint32 = job.maps->count_on(*node);
    } else if (key == PMIX_LOCALLDR) {
        const auto runs = job.maps->ranks_on(*node);
        if (runs.empty()) return nullptr;
        out.value.type = PMIX_PROC_RANK;
        out.value.data.rank = std::min_element(runs.begin(), runs.end(), [](auto &a, auto &b) {
                                  return a.first < b.first;
                              })->first;
    } else if (key == PMIX_LOCAL_PEERS) {
        for (const auto &run : job.maps->ranks_on(*node)) {
            for (std::uint64_t r = run.first; r <= run.last; ++r) {
                if (!out.text.empty()) out.text += ',';
                out.text += std::to_string(r);
            }
        }
        out.value.type = PMIX_STRING;
        out.value.data.string = out.text.data();
    } else {
        return nullptr;
    }
    return &out.value;
}

const pmix_value_t *HashStore::resolve(const pmix_proc_t &proc, std::string_view key,
                                       const Qualifiers &q, Derived &derived) const {
    const JobRecord *job = find_job(nspace_of(proc));
    if (q.session_id || q.session) return lookup(session_of(job, q), key);
    if (job == nullptr) return nullptr;
    if (q.names_node() || q.node) {
        if (const NodeRecord *node = node_of(*job, proc.rank, q)) {
            if (const pmix_value_t *v = lookup(&node->values, key)) return v;
        }
        if (const pmix_value_t *v =
                node_from_maps(*job, map_node(*job, proc.rank, q), key, derived))
            return v;
        // A job on one node may register node keys at the top level.
        return q.names_node() || !job->nodes.empty() ? nullptr : lookup(&job->values, key);
    }
    if (q.appnum || q.app) {
        if (job->apps.empty() && !q.appnum) return lookup(&job->values, key);
        return lookup(app_of(*job, proc.rank, q.appnum), key);
    }
    if (q.job) return lookup(&job->values, key);

    if (!is_job_rank(proc.rank)) {
        const auto it = job->procs.find(proc.rank);
        const pmix_value_t *v = it == job->procs.end() ? nullptr : lookup(&it->second, key);
        if (v != nullptr || !is_reserved(key)) return v;
        // Where the rank runs, from the maps, before any job-level value
        // (which describes this node, not the rank's).
        if (const pmix_value_t *m = rank_from_maps(*job, proc.rank, key, derived)) return m;
        if (q.proc) return nullptr;
    }
    // The hot path: a job-level key asked with rank WILDCARD, no qualifiers.
    if (const pmix_value_t *v = lookup(&job->values, key)) return v;
    if (!is_reserved(key)) return nullptr;
    if (const pmix_value_t *v = lookup(app_of(*job, proc.rank, std::nullopt), key)) return v;
    if (const NodeRecord *node = node_of(*job, proc.rank, q)) {
        if (const pmix_value_t *v = lookup(&node->values, key)) return v;
    }
    if (const pmix_value_t *v = lookup(session_of(job, q), key)) return v;
    if (key == PMIX_NUM_NODES && job->maps) {
        derived.value.type = PMIX_UINT32;
        derived.value.data.uint32 = static_cast<std::uint32_t>(job->maps->num_nodes());
        return &derived.value;
    }
    return node_from_maps(*job, map_node(*job, proc.rank, q), key, derived);
}

Status HashStore::fetch(const pmix_proc_t &proc, std::string_view key,
                        std::span<const pmix_info_t> qualifiers, const ValueSink &found) const {
    Derived derived;
    const pmix_value_t *value = resolve(proc, key, Qualifiers(qualifiers), derived);
    if (value == nullptr) return Status(PMIX_ERR_NOT_FOUND, {});
    found(*value);
    return Status::success();
}

Status HashStore::fetch_all(const pmix_proc_t &proc, const KeyValueSink &each) const {
    const JobRecord *job = find_job(nspace_of(proc));
    const Table *table = find_table(proc);
    if (job == nullptr || table == nullptr) {
        return Status(PMIX_ERR_NOT_FOUND, "gds_hash: nothing held for this process");
    }
    std::size_t emitted = 0;
    // Store_internal values too: a NULL-key Get returns everything this
    // process holds for `proc` (hosts read their daemons' wire-up this way).
    for (const auto &[key, entry] : *table) {
        each(key, entry.value.get());
        ++emitted;
    }
    if (is_job_rank(proc.rank)) {
        // The job's realms, as the arrays they were registered in.
        BorrowedInfos borrowed;
        auto emit = [&](const pmix_info_t &info) {
            each(info_key(info), info.value);
            ++emitted;
        };
        if (job->session) {
            const auto it = sessions_.find(*job->session);
            if (it != sessions_.end()) emit(borrowed.session_info(it->first, it->second));
        }
        for (const auto &[appnum, app] : job->apps) emit(borrowed.app_info(appnum, app));
        for (const auto &node : job->nodes) emit(borrowed.node_info(node));
    }
    if (emitted == 0) return Status(PMIX_ERR_NOT_FOUND, "gds_hash: nothing held for this process");
    return Status::success();
}

Result<Blob> HashStore::assemble_modex(const pmix_proc_t &proc, pmix_scope_t audience) const {
    return assemble_selected(proc, audience, false);
}

Result<Blob> HashStore::assemble_modex_pending(const pmix_proc_t &proc,
                                               pmix_scope_t audience) const {
    return assemble_selected(proc, audience, true);
}

Result<Blob> HashStore::assemble_modex_scope(const pmix_proc_t &proc, pmix_scope_t scope,
                                             bool pending) const {
    if (scope != PMIX_LOCAL && scope != PMIX_REMOTE && scope != PMIX_GLOBAL) {
        return bad_param(
            "assemble_modex_scope: scope must be PMIX_LOCAL, PMIX_REMOTE or "
            "PMIX_GLOBAL, not " +
            std::to_string(scope));
    }
    return assemble_selected(proc, scope, pending, true);
}

// The committed (or, `pending`, the not yet committed) Put values of `proc`
// that `audience` may see (`exact`: put with exactly that scope).
Result<Blob> HashStore::assemble_selected(const pmix_proc_t &proc, pmix_scope_t audience,
                                          bool pending, bool exact) const {
    if (!exact && audience != PMIX_LOCAL && audience != PMIX_REMOTE) {
        return bad_param("assemble_modex: audience must be PMIX_LOCAL or PMIX_REMOTE, not " +
                         std::to_string(audience));
    }
    auto selected = [audience, pending, exact](const Entry &e) {
        return e.committed != pending && !e.registered &&
               (e.scope == audience || (!exact && e.scope == PMIX_GLOBAL));
    };
    const Table *table = find_table(proc);
    std::uint32_t count = 0;
    if (table != nullptr) {
        for (const auto &[key, entry] : *table) count += selected(entry) ? 1 : 0;
    }
    // One scope's values, none: zero segments (a commit of GLOBAL values only
    // sends no LOCAL or REMOTE segment header).
    if (exact && count == 0) return Blob{};
    BlobWriter writer(BlobKind::modex, count);
    if (table != nullptr) {
        for (const auto &[key, entry] : *table) {
            if (selected(entry)) writer.add_modex_item(key, entry.scope, entry.value.get());
        }
    }
    return writer.finish();
}

Result<Blob> HashStore::assemble_job(std::string_view nspace) const {
    const JobRecord *job = find_job(nspace);
    if (job == nullptr) {
        return Status(PMIX_ERR_NOT_FOUND,
                      "gds_hash: job " + std::string(nspace) + " is not registered");
    }
    // The register_nspace layout, borrowing the stored values.
    BorrowedInfos borrowed;
    std::vector<pmix_info_t> top;
    BorrowedInfos::add_table(top, job->values, false);
    if (job->session) {
        const auto it = sessions_.find(*job->session);
        if (it != sessions_.end()) top.push_back(borrowed.session_info(it->first, it->second));
    }
    for (const auto &[appnum, app] : job->apps) top.push_back(borrowed.app_info(appnum, app));
    for (const auto &node : job->nodes) top.push_back(borrowed.node_info(node));
    for (const auto &[rank, table] : job->procs) {
        auto &list = borrowed.new_list();
        pmix_value_t r{};
        r.type = PMIX_PROC_RANK;
        r.data.rank = rank;
        list.push_back(BorrowedInfos::info(PMIX_RANK, r));
        BorrowedInfos::add_table(list, table, true, PMIX_RANK);
        if (list.size() > 1) top.push_back(borrowed.array_info(PMIX_PROC_INFO_ARRAY, list));
    }
    BlobWriter writer(BlobKind::job, static_cast<std::uint32_t>(top.size()));
    for (const auto &info : top) writer.add_job_item(info);
    return writer.finish();
}

}  // namespace pmixpp::gds_hash
