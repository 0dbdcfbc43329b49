// twonode_host [--timeout SECONDS] [--stagger MS] program [args...]
//
// A test host that plays a 2-node job on one machine, to exercise the server's
// host path: the fence_nb upcall (participants not all local) and the
// direct_modex upcall (data of a remote proc), which a single-node host such
// as pmixrun never sees.
//
// The launcher (this process) makes a socketpair and forks two "node"
// processes. Each node embeds the PMIx server (public server API only),
// registers the same job -- 4 ranks, ranks 0,1 on node0 and 2,3 on node1 --
// and forks its 2 local clients with setup_fork's environment. The nodes talk
// over the socketpair, like the daemons of a resource manager:
//   fence_nb      each node sends its contribution; both hand the
//                 concatenation (node0's blob, then node1's) back to their
//                 server. The host owns the malloc'd blob it was given and
//                 frees it (OPENMPI-CONTRACT rule 6).
//   direct_modex  the asking node sends the request; the other node calls
//                 PMIx_server_dmodex_request and sends back what it returns.
//   group         each node sends its PMIX_GROUP_ENDPT_DATA under the
//                 operation's key (op and group id); both hand back the two
//                 parts and, when a context id was asked, node0's proposal.
//                 A node whose server lost optional members passes its view
//                 of the membership (PMIX_GROUP_MEMBERSHIP); both answer the
//                 views intersected, in node0's order (docs/groups.md).
//   notify_event  the event goes to the other node, whose server gets it with
//                 PMIx_Notify_event (group events: PMIX_GROUP_LEFT, and a
//                 construct leader's PMIX_GROUP_CONSTRUCT_ABORT or
//                 PMIX_GROUP_MEMBERSHIP_UPDATE).
// Fences over any participants of the job (a group's members arrive as
// themselves): both nodes match their parts by the participant set and the
// number of fences over that set before (groupsft). The host counts by
// process: a fence completes once every participant is accounted for, by its
// node's part or because a server reported it ended (PMIXPP_FENCE_ENDED, in
// a PMIX_GROUP_FT_COLLECTIVE fence). A node's part whose
// PMIX_LOCAL_COLLECTIVE_STATUS is an error (the fence failed on that server
// before its hand-over) ends the fence with that error on both nodes.
//
// TWONODE_NO_VIEWS (environment) makes the group answer carry the endpoint
// data only, never PMIX_GROUP_MEMBERSHIP (a host that does not combine views).
//
// TWONODE_HOLD_GROUPS (environment; groupslead) makes both nodes hold their
// answers to group operations until a client notifies the event
// kReleaseGroups (range PMIX_RANGE_RM): a test can then make something
// happen after the servers called the group upcall and before the host
// answers. A node prints "group operations held N" when N operations were
// still unanswered at the end (the library never ended them).
//
// --stagger MS makes node1 wait MS milliseconds before it registers the job,
// so that node0's clients ask node1 for data it does not know yet.
//
// Each node prints one summary line (checked by the ctest cases):
//   twonode host nodeN: fences F (with data D, B bytes), dmodex asked A, served S
// and, when there were some (groupsft),
//   twonode host nodeN: fault-tolerant fences T, ended reported E (ranks R)
//   twonode host nodeN: fences failed before the hand-over X
// Exit status: 0 when all four clients exited 0; else the first failure
// (128+signal for a signal); 124 on timeout; 2 for a usage error.
#include <pmix.h>
#include <pmix_server.h>

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

extern char **environ;

namespace {

constexpr int kNodes = 2;
constexpr int kRanksPerNode = 2;
constexpr uint32_t kJobSize = kNodes * kRanksPerNode;

// ---------------------------------------------------------------------------------------------
// Messages between the two nodes: a fixed header, then `length` payload bytes.

// A test's event releasing the held group answers (TWONODE_HOLD_GROUPS);
// tests/integration/group_leader_client.c uses the same code.
constexpr pmix_status_t kReleaseGroups = PMIX_EXTERNAL_ERR_BASE - 140;

enum class MsgType : uint32_t {
    fence = 1,
    dmodex_request = 2,
    dmodex_answer = 3,
    done = 4,
    group = 5,  // id: context id proposed (node0's is used); payload: GroupKey + endpoint data
    event = 6,  // status: the event's code; payload: encode_event()
};

struct MsgHeader {
    MsgType type;
    int32_t status;
    uint64_t id;    // fence sequence number or direct-modex request id
    uint32_t rank;  // dmodex_request: the proc whose data is wanted
    uint32_t pad;
    uint64_t length;  // payload bytes
};

bool write_all(int fd, const void *p, size_t n) {
    const char *c = static_cast<const char *>(p);
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        c += w;
        n -= static_cast<size_t>(w);
    }
    return true;
}

bool read_all(int fd, void *p, size_t n) {
    char *c = static_cast<char *>(p);
    while (n > 0) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        c += r;
        n -= static_cast<size_t>(r);
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// One node's state. Upcalls run on the server's progress thread; the peer
// reader runs on its own thread; the main thread waits for the children.

// One node's part of a fence.
struct FencePart {
    bool in = false;
    pmix_status_t status = PMIX_SUCCESS;  // its PMIX_LOCAL_COLLECTIVE_STATUS
    std::vector<pmix_rank_t> ended;       // its PMIXPP_FENCE_ENDED
    std::vector<char> data;
};

// A fence, by participant set and per-set sequence ("0,2,3#1").
struct PendingFence {
    FencePart mine, theirs;
    std::vector<pmix_rank_t> participants;  // named, wildcards expanded (from my part)
    bool delivered = false;                 // my server got its answer
    pmix_modex_cbfunc_t cbfunc = nullptr;
    void *cbdata = nullptr;
};

// One group operation, matched across the nodes by (op, group id): the
// server library names each operation by its id, so concurrent constructs
// over the same processes stay apart (docs/groups.md, "For host writers").
struct PendingGroup {
    bool have_mine = false, have_theirs = false;
    bool assign = false;
    uint64_t my_cid = 0, their_cid = 0;
    std::vector<char> mine, theirs;  // each node's PMIX_GROUP_ENDPT_DATA
    // Each node's view of the membership (PMIX_GROUP_MEMBERSHIP directive;
    // none: every proc named).
    bool my_view = false, their_view = false;
    std::vector<pmix_proc_t> mine_members, their_members;
    pmix_info_cbfunc_t cbfunc = nullptr;
    void *cbdata = nullptr;
    // Each node's PMIX_LOCAL_COLLECTIVE_STATUS: a node whose construct ended
    // before its host was called still sends its part; the answer is then
    // the first error (groupslead).
    pmix_status_t my_status = PMIX_SUCCESS, their_status = PMIX_SUCCESS;
};

struct PendingDmodex {
    pmix_modex_cbfunc_t cbfunc;
    void *cbdata;
};

struct Node {
    int id = 0;
    int fd = -1;
    std::string nspace;

    std::mutex write_mutex;  // one message at a time on fd
    std::mutex mutex;        // everything below
    std::condition_variable cv;
    uint64_t next_request = 0;
    std::map<std::string, uint64_t> next_fence;  // per participant set
    std::map<std::string, PendingFence> fences;  // by "set#seq"
    std::map<uint64_t, PendingDmodex> dmodex;
    std::map<std::string, PendingGroup> groups;  // by "op:id"
    uint64_t next_context_id = 1;                // node0's are the ones used
    bool peer_done = false, peer_gone = false;

    // statistics for the summary line
    unsigned nfences = 0, nfences_with_data = 0, nasked = 0, nserved = 0, ngroups = 0;
    unsigned nevents = 0;                     // events sent to the other node (notify_event upcall)
    unsigned nft = 0;                         // fences with PMIX_GROUP_FT_COLLECTIVE
    std::vector<pmix_rank_t> ended_reported;  // PMIXPP_FENCE_ENDED, in order
    unsigned nfailed_here = 0;                // parts with an error status
    unsigned nviews = 0;       // group upcalls that passed this node's membership view
    bool answer_views = true;  // false (TWONODE_NO_VIEWS set): endpoint data only
    // TWONODE_HOLD_GROUPS: group answers wait in `held` until released.
    bool hold_groups = false, groups_released = false;
    std::vector<std::function<void()>> held;
    unsigned nheld_at_end = 0;  // group operations never answered
    // Held answers released because the other node left before a client's
    // kReleaseGroups came: counted as never released unless that release
    // still comes (the other node may finish first; the test's release is
    // then late, not missing).
    unsigned nheld_forced = 0;
    size_t fence_bytes = 0;

    bool send(MsgType type, int32_t status, uint64_t id, uint32_t rank, const char *data,
              size_t n) {
        MsgHeader h{type, status, id, rank, 0, n};
        std::lock_guard lock(write_mutex);
        return write_all(fd, &h, sizeof h) && (n == 0 || write_all(fd, data, n));
    }
};

Node g_node;

void release_buffer(void *cbdata) {
    std::free(cbdata);
}

// Hands a malloc'd copy of `bytes` to a modex callback; the library calls
// release_buffer when it is done with it.
void deliver(pmix_modex_cbfunc_t cbfunc, void *cbdata, pmix_status_t status,
             const std::vector<char> &bytes) {
    char *copy = nullptr;
    if (!bytes.empty()) {
        copy = static_cast<char *>(std::malloc(bytes.size()));
        std::memcpy(copy, bytes.data(), bytes.size());
    }
    cbfunc(status, copy, bytes.size(), cbdata, copy != nullptr ? release_buffer : nullptr, copy);
}

// Called with g_node.mutex held when a part of fence `key` came: answers
// this node's server once every participant is accounted for (or a part
// failed), and forgets the fence once both parts are in (or the peer left).
void complete_fence_locked(const std::string &key, std::unique_lock<std::mutex> &lock) {
    auto it = g_node.fences.find(key);
    if (it == g_node.fences.end()) return;
    PendingFence &f = it->second;
    if (f.mine.in && !f.delivered) {
        pmix_status_t status = f.mine.status != PMIX_SUCCESS ? f.mine.status : PMIX_SUCCESS;
        if (status == PMIX_SUCCESS && f.theirs.in) status = f.theirs.status;
        bool all_in = true;
        for (pmix_rank_t r : f.participants) {
            const FencePart &home =
                static_cast<int>(r) / kRanksPerNode == g_node.id ? f.mine : f.theirs;
            bool ended = false;
            for (const FencePart *part : {&f.mine, &f.theirs})
                ended = ended ||
                        std::find(part->ended.begin(), part->ended.end(), r) != part->ended.end();
            all_in = all_in && (home.in || ended);
        }
        if (status != PMIX_SUCCESS || all_in) {
            // Rank order of nodes: node0's blob first.
            std::vector<char> all;
            if (status == PMIX_SUCCESS) {
                all = g_node.id == 0 ? f.mine.data : f.theirs.data;
                const std::vector<char> &second = g_node.id == 0 ? f.theirs.data : f.mine.data;
                all.insert(all.end(), second.begin(), second.end());
            }
            f.delivered = true;
            const auto cbfunc = f.cbfunc;
            void *const cbdata = f.cbdata;
            const bool done = f.theirs.in || g_node.peer_gone;
            if (done) g_node.fences.erase(it);
            lock.unlock();
            deliver(cbfunc, cbdata, status, all);
            lock.lock();
            return;
        }
    }
    if (f.delivered && (f.theirs.in || g_node.peer_gone)) g_node.fences.erase(it);
}

// ---------------------------------------------------------------------------------------------
// server upcalls

void put_bytes(std::vector<char> &out, const void *p, size_t n);

pmix_status_t on_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                       size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
                       void *cbdata) {
    // The blob is ours now (malloc'd by the library): copy it out and free it.
    std::vector<char> mine(data, data + (data != nullptr ? ndata : 0));
    std::free(data);
    // The participants: processes of the job (a group used as the fence's
    // address arrives as its members), wildcards expanded.
    std::vector<pmix_rank_t> participants;
    bool known = nprocs > 0;
    for (size_t k = 0; k < nprocs; ++k) {
        known = known && std::strncmp(procs[k].nspace, g_node.nspace.c_str(), PMIX_MAX_NSLEN) == 0;
        if (procs[k].rank == PMIX_RANK_WILDCARD) {
            for (pmix_rank_t r = 0; r < kJobSize; ++r) participants.push_back(r);
        } else {
            known = known && procs[k].rank < kJobSize;
            participants.push_back(procs[k].rank);
        }
    }
    if (!known) {
        std::fprintf(stderr, "twonode host node%d: unexpected fence participants\n", g_node.id);
        return PMIX_ERR_NOT_SUPPORTED;
    }
    std::sort(participants.begin(), participants.end());
    participants.erase(std::unique(participants.begin(), participants.end()), participants.end());
    FencePart part;
    part.in = true;
    part.data = std::move(mine);
    bool ft = false;
    for (size_t i = 0; i < ninfo; ++i) {
        const pmix_value_t &v = info[i].value;
        if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_FT_COLLECTIVE)) ft = PMIX_INFO_TRUE(&info[i]);
        if (PMIX_CHECK_KEY(&info[i], PMIX_LOCAL_COLLECTIVE_STATUS) && v.type == PMIX_STATUS)
            part.status = v.data.status;
        if (PMIX_CHECK_KEY(&info[i], PMIXPP_FENCE_ENDED) && v.type == PMIX_DATA_ARRAY &&
            v.data.darray != nullptr && v.data.darray->type == PMIX_PROC) {
            const auto *p = static_cast<const pmix_proc_t *>(v.data.darray->array);
            for (size_t k = 0; k < v.data.darray->size; ++k) part.ended.push_back(p[k].rank);
        }
    }
    std::string set;
    for (pmix_rank_t r : participants) set += (set.empty() ? "" : ",") + std::to_string(r);
    std::unique_lock lock(g_node.mutex);
    if (g_node.peer_gone) return PMIX_ERR_LOST_CONNECTION;
    const std::string key = set + "#" + std::to_string(g_node.next_fence[set]++);
    ++g_node.nfences;
    if (!part.data.empty()) ++g_node.nfences_with_data;
    g_node.fence_bytes += part.data.size();
    if (ft) ++g_node.nft;
    if (part.status != PMIX_SUCCESS) ++g_node.nfailed_here;
    g_node.ended_reported.insert(g_node.ended_reported.end(), part.ended.begin(), part.ended.end());
    // The message: the key, a NUL, the ended ranks (u32 n, n ranks), the data;
    // the header's status is the part's.
    std::vector<char> payload(key.begin(), key.end());
    payload.push_back('\0');
    const uint32_t nended = static_cast<uint32_t>(part.ended.size());
    put_bytes(payload, &nended, sizeof nended);
    put_bytes(payload, part.ended.data(), part.ended.size() * sizeof(pmix_rank_t));
    payload.insert(payload.end(), part.data.begin(), part.data.end());
    const pmix_status_t status = part.status;
    PendingFence &f = g_node.fences[key];
    f.cbfunc = cbfunc;
    f.cbdata = cbdata;
    f.participants = std::move(participants);
    f.mine = std::move(part);
    lock.unlock();
    if (!g_node.send(MsgType::fence, status, 0, 0, payload.data(), payload.size())) {
        lock.lock();
        g_node.fences.erase(key);
        return PMIX_ERR_LOST_CONNECTION;
    }
    lock.lock();
    complete_fence_locked(key, lock);
    return PMIX_SUCCESS;
}

void add_info(std::vector<pmix_info_t> &v, const char *key, const void *data, pmix_data_type_t t);

// The answer to the library: both nodes' endpoint data and, when asked for,
// node0's context id. Holds its infos until the library releases them.
struct GroupAnswer {
    std::vector<pmix_info_t> info;
};

void release_group_answer(void *cbdata) {
    auto *a = static_cast<GroupAnswer *>(cbdata);
    for (auto &i : a->info) PMIx_Value_destruct(&i.value);
    delete a;
}

// TWONODE_HOLD_GROUPS: keeps `answer` until release_groups(); false when
// answers are not held (any more). Called with g_node.mutex held.
bool hold_group_answer_locked(const std::function<void()> &answer) {
    if (!g_node.hold_groups || g_node.groups_released) return false;
    g_node.held.push_back(answer);
    return true;
}

// Answers the held group operations, and every later one at once.
void release_groups() {
    std::vector<std::function<void()>> held;
    {
        std::lock_guard lock(g_node.mutex);
        g_node.groups_released = true;
        held = std::move(g_node.held);
        g_node.held.clear();
    }
    for (auto &answer : held) answer();
}

// Called with g_node.mutex held once both nodes' parts of group operation `key` are in.
void complete_group_locked(const std::string &key, std::unique_lock<std::mutex> &lock) {
    auto it = g_node.groups.find(key);
    if (it == g_node.groups.end() || !it->second.have_mine || !it->second.have_theirs) return;
    PendingGroup gr = std::move(it->second);
    g_node.groups.erase(it);
    auto *a = new GroupAnswer;
    for (const auto *part : {&gr.mine, &gr.theirs}) {
        if (part->empty()) continue;
        pmix_byte_object_t bo{const_cast<char *>(part->data()), part->size()};
        add_info(a->info, PMIX_GROUP_ENDPT_DATA, &bo, PMIX_BYTE_OBJECT);
    }
    if (gr.assign) {
        const size_t cid = g_node.id == 0 ? gr.my_cid : gr.their_cid;
        add_info(a->info, PMIX_GROUP_CONTEXT_ID, &cid, PMIX_SIZE);
    }
    if ((gr.my_view || gr.their_view) && g_node.answer_views) {
        // The reduced membership: node0's view (else node1's) without what
        // the other node's view lacks.
        const bool v0 = g_node.id == 0 ? gr.my_view : gr.their_view;
        const bool v1 = g_node.id == 0 ? gr.their_view : gr.my_view;
        const auto &m0 = g_node.id == 0 ? gr.mine_members : gr.their_members;
        const auto &m1 = g_node.id == 0 ? gr.their_members : gr.mine_members;
        std::vector<pmix_proc_t> members;
        for (const auto &p : v0 ? m0 : m1) {
            bool keep = !(v0 && v1);
            for (const auto &q : m1) keep = keep || PMIX_CHECK_PROCID(&p, &q);
            if (keep) members.push_back(p);
        }
        pmix_data_array_t darray{PMIX_PROC, members.size(), members.data()};
        add_info(a->info, PMIX_GROUP_MEMBERSHIP, &darray, PMIX_DATA_ARRAY);
    }
    const pmix_status_t status = gr.my_status != PMIX_SUCCESS ? gr.my_status : gr.their_status;
    auto answer = [cbfunc = gr.cbfunc, cbdata = gr.cbdata, a, status] {
        cbfunc(status, a->info.empty() ? nullptr : a->info.data(), a->info.size(), cbdata,
               release_group_answer, a);
    };
    if (hold_group_answer_locked(answer)) return;
    lock.unlock();
    answer();
    lock.lock();
}

pmix_status_t on_group(pmix_group_operation_t op, char grp[], const pmix_proc_t[], size_t,
                       const pmix_info_t directives[], size_t ndirs, pmix_info_cbfunc_t cbfunc,
                       void *cbdata) {
    std::vector<char> mine;
    bool assign = false, view = false;
    pmix_status_t local_status = PMIX_SUCCESS;
    std::vector<pmix_proc_t> members;
    for (size_t i = 0; i < ndirs; ++i) {
        const pmix_value_t &v = directives[i].value;
        if (PMIX_CHECK_KEY(&directives[i], PMIX_GROUP_MEMBERSHIP) && v.type == PMIX_DATA_ARRAY &&
            v.data.darray != nullptr && v.data.darray->type == PMIX_PROC) {
            const auto *p = static_cast<const pmix_proc_t *>(v.data.darray->array);
            members.assign(p, p + v.data.darray->size);
            view = true;
        }
        if (PMIX_CHECK_KEY(&directives[i], PMIX_GROUP_ENDPT_DATA) &&
            directives[i].value.type == PMIX_BYTE_OBJECT) {
            const auto &bo = directives[i].value.data.bo;
            mine.assign(bo.bytes, bo.bytes + bo.size);
        }
        if (PMIX_CHECK_KEY(&directives[i], PMIX_GROUP_ASSIGN_CONTEXT_ID))
            assign = PMIX_INFO_TRUE(&directives[i]);
        if (PMIX_CHECK_KEY(&directives[i], PMIX_LOCAL_COLLECTIVE_STATUS) && v.type == PMIX_STATUS)
            local_status = v.data.status;
    }
    // The payload: the key (op:id), a NUL, a flag (a view follows), the
    // view (u32 n, n procs), then the endpoint data.
    const std::string key = std::to_string(static_cast<int>(op)) + ":" + grp;
    std::vector<char> payload(key.begin(), key.end());
    payload.push_back('\0');
    payload.push_back(view ? 1 : 0);
    const uint32_t nview = static_cast<uint32_t>(members.size());
    put_bytes(payload, &nview, sizeof nview);
    put_bytes(payload, members.data(), members.size() * sizeof(pmix_proc_t));
    payload.insert(payload.end(), mine.begin(), mine.end());
    std::unique_lock lock(g_node.mutex);
    if (g_node.peer_gone) return PMIX_ERR_LOST_CONNECTION;
    ++g_node.ngroups;
    if (view) ++g_node.nviews;
    PendingGroup &gr = g_node.groups[key];
    gr.have_mine = true;
    gr.assign = assign;
    gr.my_cid = assign ? g_node.next_context_id++ : 0;
    gr.mine = std::move(mine);
    gr.my_view = view;
    gr.mine_members = std::move(members);
    gr.cbfunc = cbfunc;
    gr.cbdata = cbdata;
    gr.my_status = local_status;
    const uint64_t proposed = gr.my_cid;
    lock.unlock();
    if (!g_node.send(MsgType::group, local_status, proposed, 0, payload.data(), payload.size())) {
        lock.lock();
        g_node.groups.erase(key);
        return PMIX_ERR_LOST_CONNECTION;
    }
    lock.lock();
    complete_group_locked(key, lock);
    return PMIX_SUCCESS;
}

// ---------------------------------------------------------------------------------------------
// events: the server's notify_event upcall (an event whose range leaves the
// node, e.g. PMIX_GROUP_LEFT to the group's members on the other node) goes
// to the other node, which hands it to its server with PMIx_Notify_event.
// Only what group events carry crosses: source, range and the infos of type
// string, proc, array of procs, bool and size.

void put_bytes(std::vector<char> &out, const void *p, size_t n) {
    if (n == 0) return;  // an empty array may have no data at all
    const char *c = static_cast<const char *>(p);
    out.insert(out.end(), c, c + n);
}

std::vector<char> encode_event(const pmix_proc_t *source, pmix_data_range_t range,
                               const pmix_info_t info[], size_t ninfo) {
    std::vector<char> out;
    pmix_proc_t src{};
    if (source != nullptr) src = *source;
    put_bytes(out, &src, sizeof src);
    const uint32_t r = range;
    put_bytes(out, &r, sizeof r);
    for (size_t i = 0; i < ninfo; ++i) {
        const pmix_value_t &v = info[i].value;
        const bool procs = v.type == PMIX_DATA_ARRAY && v.data.darray != nullptr &&
                           v.data.darray->type == PMIX_PROC;
        // groupsinv: the invitation protocol's flags (bool) and sizes cross too.
        const bool scalar = v.type == PMIX_BOOL || v.type == PMIX_SIZE;
        if (v.type != PMIX_STRING && v.type != PMIX_PROC && !procs && !scalar) continue;
        put_bytes(out, info[i].key, sizeof info[i].key);
        const uint16_t type = v.type;
        put_bytes(out, &type, sizeof type);
        if (v.type == PMIX_STRING) {
            const uint32_t n = v.data.string != nullptr ? std::strlen(v.data.string) : 0;
            put_bytes(out, &n, sizeof n);
            put_bytes(out, v.data.string, n);
        } else if (v.type == PMIX_PROC) {
            put_bytes(out, v.data.proc, sizeof(pmix_proc_t));
        } else if (v.type == PMIX_BOOL) {
            put_bytes(out, &v.data.flag, sizeof v.data.flag);
        } else if (v.type == PMIX_SIZE) {
            put_bytes(out, &v.data.size, sizeof v.data.size);
        } else {
            const uint32_t n = v.data.darray->size;
            put_bytes(out, &n, sizeof n);
            put_bytes(out, v.data.darray->array, n * sizeof(pmix_proc_t));
        }
    }
    return out;
}

// Hands an event from the other node to this node's server.
void deliver_event(pmix_status_t code, const std::vector<char> &in) {
    size_t at = 0;
    auto take = [&](void *p, size_t n) {
        if (at + n > in.size()) return false;
        if (n > 0) std::memcpy(p, in.data() + at, n);  // an empty array's data() may be NULL
        at += n;
        return true;
    };
    pmix_proc_t source{};
    uint32_t range = 0;
    if (!take(&source, sizeof source) || !take(&range, sizeof range)) return;
    std::vector<pmix_info_t> info;
    for (;;) {
        pmix_key_t key;
        uint16_t type = 0;
        if (!take(key, sizeof key) || !take(&type, sizeof type)) break;
        key[PMIX_MAX_KEYLEN] = '\0';
        info.emplace_back();
        std::memset(&info.back(), 0, sizeof(pmix_info_t));
        if (type == PMIX_STRING) {
            uint32_t n = 0;
            if (!take(&n, sizeof n) || at + n > in.size()) break;
            std::string text(in.data() + at, n);
            at += n;
            PMIx_Info_load(&info.back(), key, text.c_str(), PMIX_STRING);
        } else if (type == PMIX_PROC) {
            pmix_proc_t p{};
            if (!take(&p, sizeof p)) break;
            PMIx_Info_load(&info.back(), key, &p, PMIX_PROC);
        } else if (type == PMIX_BOOL) {
            bool flag = false;
            if (!take(&flag, sizeof flag)) break;
            PMIx_Info_load(&info.back(), key, &flag, PMIX_BOOL);
        } else if (type == PMIX_SIZE) {
            size_t size = 0;
            if (!take(&size, sizeof size)) break;
            PMIx_Info_load(&info.back(), key, &size, PMIX_SIZE);
        } else {
            uint32_t n = 0;
            if (!take(&n, sizeof n) || at + n * sizeof(pmix_proc_t) > in.size()) break;
            std::vector<pmix_proc_t> procs(n);
            take(procs.data(), n * sizeof(pmix_proc_t));
            pmix_data_array_t darray{PMIX_PROC, n, procs.data()};
            PMIx_Info_load(&info.back(), key, &darray, PMIX_DATA_ARRAY);
        }
    }
    pmix_status_t rc =
        PMIx_Notify_event(code, &source, static_cast<pmix_data_range_t>(range),
                          info.empty() ? nullptr : info.data(), info.size(), nullptr, nullptr);
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
        std::fprintf(stderr, "twonode host node%d: PMIx_Notify_event: %s\n", g_node.id,
                     PMIx_Error_string(rc));
    for (auto &i : info) PMIx_Value_destruct(&i.value);
}

pmix_status_t on_notify_event(pmix_status_t code, const pmix_proc_t *source,
                              pmix_data_range_t range, pmix_info_t info[], size_t ninfo,
                              pmix_op_cbfunc_t, void *) {
    const std::vector<char> payload = encode_event(source, range, info, ninfo);
    if (code == kReleaseGroups) {
        {
            std::lock_guard lock(g_node.mutex);
            g_node.nheld_forced = 0;  // the test did release them
        }
        release_groups();  // and the other node's, below
    }
    {
        std::lock_guard lock(g_node.mutex);
        if (g_node.peer_gone) return PMIX_ERR_LOST_CONNECTION;
        ++g_node.nevents;
    }
    if (!g_node.send(MsgType::event, code, 0, 0, payload.data(), payload.size()))
        return PMIX_ERR_LOST_CONNECTION;
    return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t on_direct_modex(const pmix_proc_t *proc, const pmix_info_t[], size_t,
                              pmix_modex_cbfunc_t cbfunc, void *cbdata) {
    if (std::strncmp(proc->nspace, g_node.nspace.c_str(), PMIX_MAX_NSLEN) != 0 ||
        proc->rank >= kJobSize || static_cast<int>(proc->rank) / kRanksPerNode == g_node.id) {
        return PMIX_ERR_NOT_FOUND;  // not a proc of the other node
    }
    std::unique_lock lock(g_node.mutex);
    if (g_node.peer_gone) return PMIX_ERR_LOST_CONNECTION;
    const uint64_t id = g_node.next_request++;
    ++g_node.nasked;
    g_node.dmodex[id] = PendingDmodex{cbfunc, cbdata};
    lock.unlock();
    if (!g_node.send(MsgType::dmodex_request, 0, id, proc->rank, nullptr, 0)) {
        lock.lock();
        g_node.dmodex.erase(id);
        return PMIX_ERR_LOST_CONNECTION;
    }
    return PMIX_SUCCESS;
}

// The answer to a request from the other node, from PMIx_server_dmodex_request.
// `data` belongs to the library: send it before returning.
void on_dmodex_answer(pmix_status_t status, char *data, size_t sz, void *cbdata) {
    auto *id = static_cast<uint64_t *>(cbdata);
    g_node.send(MsgType::dmodex_answer, status, *id, 0, data, data != nullptr ? sz : 0);
    delete id;
}

// ---------------------------------------------------------------------------------------------
// the peer reader thread

void serve_peer() {
    for (;;) {
        MsgHeader h{};
        std::vector<char> payload;
        bool ok = read_all(g_node.fd, &h, sizeof h);
        if (ok && h.length > 0) {
            payload.resize(h.length);
            ok = read_all(g_node.fd, payload.data(), payload.size());
        }
        std::unique_lock lock(g_node.mutex);
        if (!ok) {
            // The other node is gone: fail whatever still waits for it. An
            // operation with both parts in is complete, not lost: the other
            // node may answer and leave (a node whose client failed leaves
            // at once) while our upcall, between its send and its own
            // completion, has released the mutex.
            g_node.peer_gone = true;
            std::vector<std::string> fences_in;
            for (const auto &[key, f] : g_node.fences) fences_in.push_back(key);
            for (const auto &key : fences_in) complete_fence_locked(key, lock);
            std::vector<std::string> groups_in;
            for (const auto &[key, gr] : g_node.groups)
                if (gr.have_mine && gr.have_theirs) groups_in.push_back(key);
            for (const auto &key : groups_in) complete_group_locked(key, lock);
            auto fences = std::move(g_node.fences);
            auto requests = std::move(g_node.dmodex);
            auto groups = std::move(g_node.groups);
            g_node.groups.clear();
            g_node.nheld_forced += static_cast<unsigned>(g_node.held.size());
            g_node.fences.clear();
            g_node.dmodex.clear();
            g_node.cv.notify_all();
            lock.unlock();
            for (auto &[key, f] : fences) {
                if (f.mine.in && !f.delivered)
                    deliver(f.cbfunc, f.cbdata, PMIX_ERR_LOST_CONNECTION, {});
            }
            for (auto &[id, r] : requests)
                deliver(r.cbfunc, r.cbdata, PMIX_ERR_LOST_CONNECTION, {});
            for (auto &[key, gr] : groups) {
                if (!gr.have_mine) continue;
                ++g_node.nheld_at_end;  // read by run_node after this thread ends
                gr.cbfunc(PMIX_ERR_LOST_CONNECTION, nullptr, 0, gr.cbdata, nullptr, nullptr);
            }
            release_groups();  // answers still held (never released by the test)
            return;
        }
        switch (h.type) {
            case MsgType::fence: {
                auto nul = std::find(payload.begin(), payload.end(), '\0');
                if (nul == payload.end()) break;
                const std::string key(payload.begin(), nul);
                size_t at = static_cast<size_t>(nul - payload.begin()) + 1;
                uint32_t nended = 0;
                if (at + sizeof nended > payload.size()) break;
                std::memcpy(&nended, payload.data() + at, sizeof nended);
                at += sizeof nended;
                if (at + nended * sizeof(pmix_rank_t) > payload.size()) break;
                PendingFence &f = g_node.fences[key];
                f.theirs.in = true;
                f.theirs.status = h.status;
                f.theirs.ended.resize(nended);
                if (nended > 0)
                    std::memcpy(f.theirs.ended.data(), payload.data() + at,
                                nended * sizeof(pmix_rank_t));
                at += nended * sizeof(pmix_rank_t);
                f.theirs.data.assign(payload.begin() + static_cast<std::ptrdiff_t>(at),
                                     payload.end());
                complete_fence_locked(key, lock);
                break;
            }
            case MsgType::dmodex_request: {
                ++g_node.nserved;
                lock.unlock();
                pmix_proc_t proc{};
                PMIX_LOAD_PROCID(&proc, g_node.nspace.c_str(), h.rank);
                auto *id = new uint64_t(h.id);
                pmix_status_t rc = PMIx_server_dmodex_request(&proc, on_dmodex_answer, id);
                if (rc != PMIX_SUCCESS) {
                    delete id;
                    g_node.send(MsgType::dmodex_answer, rc, h.id, 0, nullptr, 0);
                }
                break;
            }
            case MsgType::dmodex_answer: {
                auto it = g_node.dmodex.find(h.id);
                if (it == g_node.dmodex.end()) break;
                PendingDmodex r = it->second;
                g_node.dmodex.erase(it);
                lock.unlock();
                deliver(r.cbfunc, r.cbdata, h.status, payload);
                break;
            }
            case MsgType::group: {
                auto nul = std::find(payload.begin(), payload.end(), '\0');
                if (nul == payload.end()) break;
                const std::string key(payload.begin(), nul);
                size_t at = static_cast<size_t>(nul - payload.begin()) + 1;
                uint32_t nview = 0;
                if (at + 1 + sizeof nview > payload.size()) break;
                const bool view = payload[at++] != 0;
                std::memcpy(&nview, payload.data() + at, sizeof nview);
                at += sizeof nview;
                if (at + nview * sizeof(pmix_proc_t) > payload.size()) break;
                PendingGroup &gr = g_node.groups[key];
                gr.their_view = view;
                gr.their_members.resize(nview);
                if (nview > 0)  // data() of an empty vector may be NULL
                    std::memcpy(gr.their_members.data(), payload.data() + at,
                                nview * sizeof(pmix_proc_t));
                at += nview * sizeof(pmix_proc_t);
                gr.have_theirs = true;
                gr.their_cid = h.id;
                gr.their_status = h.status;
                gr.theirs.assign(payload.begin() + static_cast<std::ptrdiff_t>(at), payload.end());
                complete_group_locked(key, lock);
                break;
            }
            case MsgType::event:
                lock.unlock();
                if (h.status == kReleaseGroups) {
                    release_groups();
                    break;
                }
                deliver_event(h.status, payload);
                break;
            case MsgType::done:
                g_node.peer_done = true;
                g_node.cv.notify_all();
                break;
            default:
                std::fprintf(stderr, "twonode host node%d: unknown message %u from the peer\n",
                             g_node.id, static_cast<unsigned>(h.type));
                break;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// one node

void add_info(std::vector<pmix_info_t> &v, const char *key, const void *data, pmix_data_type_t t) {
    v.emplace_back();
    std::memset(&v.back(), 0, sizeof(pmix_info_t));
    PMIx_Info_load(&v.back(), key, data, t);
}

std::string node_name(int node) {
    return "node" + std::to_string(node);
}

// The job as both nodes register it; only the node-local keys differ.
std::vector<pmix_info_t> job_info(int node) {
    std::vector<pmix_info_t> info;
    char *node_map = nullptr, *proc_map = nullptr;
    PMIx_generate_regex("node0,node1", &node_map);
    PMIx_generate_ppn("0,1;2,3", &proc_map);
    const uint32_t size = kJobSize, nnodes = kNodes, local = kRanksPerNode, one = 1, zero = 0;
    const uint32_t nodeid = static_cast<uint32_t>(node);
    const pmix_rank_t leader = static_cast<pmix_rank_t>(node * kRanksPerNode);
    std::string peers;
    for (int r = 0; r < kRanksPerNode; ++r)
        peers += (r ? "," : "") + std::to_string(node * kRanksPerNode + r);
    const std::string host = node_name(node);
    add_info(info, PMIX_JOBID, g_node.nspace.c_str(), PMIX_STRING);
    add_info(info, PMIX_JOB_SIZE, &size, PMIX_UINT32);
    add_info(info, PMIX_UNIV_SIZE, &size, PMIX_UINT32);
    add_info(info, PMIX_MAX_PROCS, &size, PMIX_UINT32);
    add_info(info, PMIX_NUM_NODES, &nnodes, PMIX_UINT32);
    add_info(info, PMIX_JOB_NUM_APPS, &one, PMIX_UINT32);
    add_info(info, PMIX_NPROC_OFFSET, &zero, PMIX_PROC_RANK);
    add_info(info, PMIX_NODE_MAP, node_map, PMIX_STRING);
    add_info(info, PMIX_PROC_MAP, proc_map, PMIX_STRING);
    add_info(info, PMIX_NODEID, &nodeid, PMIX_UINT32);
    add_info(info, PMIX_HOSTNAME, host.c_str(), PMIX_STRING);
    add_info(info, PMIX_LOCAL_SIZE, &local, PMIX_UINT32);
    add_info(info, PMIX_NODE_SIZE, &local, PMIX_UINT32);
    add_info(info, PMIX_LOCAL_PEERS, peers.c_str(), PMIX_STRING);
    add_info(info, PMIX_LOCALLDR, &leader, PMIX_PROC_RANK);
    std::free(node_map);
    std::free(proc_map);
    for (uint32_t r = 0; r < kJobSize; ++r) {
        std::vector<pmix_info_t> pd;
        const pmix_rank_t rank = r;
        const uint16_t lrank = static_cast<uint16_t>(r % kRanksPerNode);
        const uint32_t its_node = r / kRanksPerNode;
        const std::string its_host = node_name(static_cast<int>(its_node));
        add_info(pd, PMIX_RANK, &rank, PMIX_PROC_RANK);
        add_info(pd, PMIX_GLOBAL_RANK, &rank, PMIX_PROC_RANK);
        add_info(pd, PMIX_APP_RANK, &rank, PMIX_PROC_RANK);
        add_info(pd, PMIX_LOCAL_RANK, &lrank, PMIX_UINT16);
        add_info(pd, PMIX_NODE_RANK, &lrank, PMIX_UINT16);
        add_info(pd, PMIX_NODEID, &its_node, PMIX_UINT32);
        add_info(pd, PMIX_APPNUM, &zero, PMIX_UINT32);
        add_info(pd, PMIX_HOSTNAME, its_host.c_str(), PMIX_STRING);
        pmix_data_array_t darray{PMIX_INFO, pd.size(), pd.data()};
        add_info(info, PMIX_PROC_DATA, &darray, PMIX_DATA_ARRAY);
        for (auto &x : pd) PMIx_Value_destruct(&x.value);
    }
    return info;
}

int child_status(int st) {
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

// A node that cannot set up its half of the job stops at once; the other node
// sees the socket close and fails what waits for it.
[[noreturn]] void node_failed(const std::string &me, const char *what, pmix_status_t rc) {
    std::fprintf(stderr, "%s: %s: %s\n", me.c_str(), what, PMIx_Error_string(rc));
    std::fflush(nullptr);
    std::_Exit(1);
}

int run_node(int node, int fd, const std::string &nspace, long timeout, long stagger_ms,
             char **child_argv) {
    g_node.id = node;
    g_node.fd = fd;
    g_node.nspace = nspace;
    g_node.answer_views = std::getenv("TWONODE_NO_VIEWS") == nullptr;
    g_node.hold_groups = std::getenv("TWONODE_HOLD_GROUPS") != nullptr;
    // groupsft: TWONODE_HOLD_GROUPS=node1 holds node1's answers only, so
    // that node0's part of a group forms first.
    if (const char *h = std::getenv("TWONODE_HOLD_GROUPS");
        h != nullptr && std::string(h) == "node1")
        g_node.hold_groups = node == 1;
    signal(SIGPIPE, SIG_IGN);
    const std::string me = "twonode host " + node_name(node);

    pmix_server_module_t module{};
    module.fence_nb = on_fence;
    module.direct_modex = on_direct_modex;
    module.group = on_group;
    module.notify_event = on_notify_event;
    pmix_status_t rc = PMIx_server_init(&module, nullptr, 0);
    if (rc != PMIX_SUCCESS) node_failed(me, "PMIx_server_init", rc);
    std::thread reader(serve_peer);
    if (node == 1 && stagger_ms > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(stagger_ms));

    // Register the local clients first, then the job (the order ORTE uses).
    std::vector<pmix_proc_t> local(kRanksPerNode);
    for (int i = 0; i < kRanksPerNode; ++i) {
        PMIX_LOAD_PROCID(&local[i], nspace.c_str(),
                         static_cast<pmix_rank_t>(node * kRanksPerNode + i));
        rc = PMIx_server_register_client(&local[i], getuid(), getgid(), nullptr, nullptr, nullptr);
        if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
            node_failed(me, "register_client", rc);
    }
    std::vector<pmix_info_t> info = job_info(node);
    pmix_nspace_t ns{};
    PMIX_LOAD_NSPACE(ns, nspace.c_str());
    rc = PMIx_server_register_nspace(ns, kRanksPerNode, info.data(), info.size(), nullptr, nullptr);
    for (auto &x : info) PMIx_Value_destruct(&x.value);
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
        node_failed(me, "register_nspace", rc);

    std::map<pid_t, pmix_rank_t> children;
    for (const auto &proc : local) {
        size_t n = 0;
        while (environ[n] != nullptr) ++n;
        char **env = static_cast<char **>(std::calloc(n + 1, sizeof(char *)));
        for (size_t k = 0; k < n; ++k) env[k] = strdup(environ[k]);
        rc = PMIx_server_setup_fork(&proc, &env);
        if (rc != PMIX_SUCCESS) node_failed(me, "setup_fork", rc);
        pid_t pid = fork();
        if (pid == 0) {
            execve(child_argv[0], child_argv, env);
            std::fprintf(stderr, "%s: cannot execute %s: %s\n", me.c_str(), child_argv[0],
                         std::strerror(errno));
            _exit(127);
        }
        for (char **e = env; *e != nullptr; ++e) std::free(*e);
        std::free(env);
        if (pid < 0) {
            std::fprintf(stderr, "%s: fork: %s\n", me.c_str(), std::strerror(errno));
            break;
        }
        children[pid] = proc.rank;
    }

    using clock = std::chrono::steady_clock;
    const auto deadline = clock::now() + std::chrono::seconds(timeout);
    int status = children.size() == local.size() ? 0 : 1;
    bool killed = false;
    while (!children.empty()) {
        int st = 0;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid > 0) {
            auto it = children.find(pid);
            if (it == children.end()) continue;
            const int code = child_status(st);
            if (code != 0) {
                std::fprintf(stderr, "%s: rank %u exited with status %d\n", me.c_str(), it->second,
                             code);
                if (status == 0) status = code;
            }
            children.erase(it);
            continue;
        }
        if (pid < 0 && errno != EINTR) break;
        if (!killed && clock::now() > deadline) {
            std::fprintf(stderr, "%s: timed out after %ld s; killing the clients\n", me.c_str(),
                         timeout);
            for (const auto &[p, rank] : children) kill(p, SIGKILL);
            killed = true;
            status = 124;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }

    // Keep serving the other node until its clients are done too -- unless
    // ours failed: then the job is lost, and closing the socket at once fails
    // the other node's pending fences instead of leaving its clients hanging.
    g_node.send(MsgType::done, 0, 0, 0, nullptr, 0);
    if (status == 0) {
        std::unique_lock lock(g_node.mutex);
        g_node.cv.wait_until(lock, deadline + std::chrono::seconds(5),
                             [] { return g_node.peer_done || g_node.peer_gone; });
    }
    shutdown(fd, SHUT_WR);  // the peer's reader sees the end, and so does ours
    reader.join();

    for (const auto &proc : local) PMIx_server_deregister_client(&proc, nullptr, nullptr);
    PMIx_server_deregister_nspace(ns, nullptr, nullptr);
    PMIx_server_finalize();
    close(fd);
    std::printf("%s: fences %u (with data %u, %zu bytes), dmodex asked %u, served %u\n", me.c_str(),
                g_node.nfences, g_node.nfences_with_data, g_node.fence_bytes, g_node.nasked,
                g_node.nserved);
    if (g_node.nft > 0) {
        std::string ranks;
        for (pmix_rank_t r : g_node.ended_reported)
            ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
        std::printf("%s: fault-tolerant fences %u, ended reported %zu (ranks %s)\n", me.c_str(),
                    g_node.nft, g_node.ended_reported.size(), ranks.c_str());
    }
    if (g_node.nfailed_here > 0)
        std::printf("%s: fences failed before the hand-over %u\n", me.c_str(), g_node.nfailed_here);
    if (g_node.ngroups > 0) std::printf("%s: group operations %u\n", me.c_str(), g_node.ngroups);
    if (g_node.nevents > 0) std::printf("%s: events forwarded %u\n", me.c_str(), g_node.nevents);
    if (g_node.nviews > 0) std::printf("%s: membership views %u\n", me.c_str(), g_node.nviews);
    if (g_node.nheld_at_end + g_node.nheld_forced > 0)
        std::printf("%s: group operations held %u\n", me.c_str(),
                    g_node.nheld_at_end + g_node.nheld_forced);
    std::fflush(stdout);
    return status;
}

int usage() {
    std::fputs("usage: twonode_host [--timeout SECONDS] [--stagger MS] program [args...]\n",
               stderr);
    return 2;
}

}  // namespace

int main(int argc, char **argv) {
    long timeout = 60, stagger_ms = 0;
    int i = 1;
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        char *end = nullptr;
        const long v = std::strtol(argv[i + 1], &end, 10);
        if (*end != '\0') return usage();
        if (std::strcmp(argv[i], "--timeout") == 0 && v >= 1) {
            timeout = v;
        } else if (std::strcmp(argv[i], "--stagger") == 0 && v >= 0) {
            stagger_ms = v;
        } else {
            return usage();
        }
    }
    if (i >= argc) return usage();
    if (access(argv[i], X_OK) != 0) {
        std::fprintf(stderr, "twonode_host: cannot run %s\n", argv[i]);
        return 127;
    }
    std::vector<char *> child_argv(argv + i, argv + argc);
    child_argv.push_back(nullptr);
    const std::string nspace = "twonode." + std::to_string(getpid());

    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        std::perror("twonode_host: socketpair");
        return 1;
    }
    std::fflush(stdout);
    pid_t nodes[kNodes];
    for (int n = 0; n < kNodes; ++n) {
        nodes[n] = fork();
        if (nodes[n] == 0) {
            close(sv[1 - n]);
            std::exit(run_node(n, sv[n], nspace, timeout, stagger_ms, child_argv.data()));
        }
        if (nodes[n] < 0) {
            std::perror("twonode_host: fork");
            return 1;
        }
    }
    close(sv[0]);
    close(sv[1]);

    // Each node bounds its own wait; this is the last resort.
    using clock = std::chrono::steady_clock;
    const auto deadline = clock::now() + std::chrono::seconds(timeout + 20);
    int status = 0, remaining = kNodes;
    while (remaining > 0) {
        int st = 0;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid > 0) {
            --remaining;
            if (status == 0) status = child_status(st);
            continue;
        }
        if (pid < 0 && errno != EINTR) break;
        if (clock::now() > deadline) {
            std::fprintf(stderr, "twonode_host: the nodes did not finish; killing them\n");
            for (pid_t p : nodes) kill(p, SIGKILL);
            status = 124;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return status;
}
