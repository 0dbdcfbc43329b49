// twonode_host [--nodes N] [--timeout SECONDS] [--stagger MS] [--stagger-node K]
//              [--hold FROM:TO:CODE:UNTIL] program [args...]
//
// A test host that plays a job over N nodes (default 2, at most 8) on one
// machine, to exercise the server's host path: the fence_nb upcall
// (participants not all local) and the direct_modex upcall (data of a remote
// proc), which a single-node host such as pmixrun never sees.
//
// The launcher (this process) makes a socketpair between every two nodes
// and forks N "node" processes. Each node embeds the PMIx server (public
// server API only), registers the same job -- 2 ranks per node: ranks 2k,
// 2k+1 on node k -- and forks its 2 local clients with setup_fork's
// environment. The nodes talk over the socketpairs, like the daemons of a
// resource manager:
//   fence_nb      each node sends its contribution to the nodes of the
//                 other participants; each hands the concatenation (in node
//                 order) back to its server. The host owns the malloc'd blob
//                 it was given and frees it (OPENMPI-CONTRACT rule 6).
//   direct_modex  the asking node sends the request to the proc's node,
//                 which calls PMIx_server_dmodex_request and sends back what
//                 it returns.
//   group         each node sends its PMIX_GROUP_ENDPT_DATA under the
//                 operation's key (op and group id) to the nodes of the
//                 other members (the procs of the upcall); every one of them
//                 hands back all parts and, when a context id was asked, the
//                 proposal of the lowest such node (proposals are unique
//                 across nodes). A node whose server lost optional members
//                 passes its view of the membership (PMIX_GROUP_MEMBERSHIP);
//                 all answer the views intersected, in the order of the
//                 lowest node with a view (docs/groups.md).
//   notify_event  the event goes to the nodes of the processes its range
//                 names (PMIX_RANGE_CUSTOM: PMIX_EVENT_CUSTOM_RANGE), else to
//                 every other node, whose server gets it with
//                 PMIx_Notify_event (group events: PMIX_GROUP_LEFT, and a
//                 construct leader's PMIX_GROUP_CONSTRUCT_ABORT or
//                 PMIX_GROUP_MEMBERSHIP_UPDATE).
// Fences over any participants of the job (a group's members arrive as
// themselves): the nodes match their parts by the participant set and the
// number of fences over that set before (groupsft). The host counts by
// process: a fence completes once every participant is accounted for, by its
// node's part or because a server reported it ended (PMIXPP_FENCE_ENDED, in
// a PMIX_GROUP_FT_COLLECTIVE fence). A node's part whose
// PMIX_LOCAL_COLLECTIVE_STATUS is an error (the fence failed on that server
// before its hand-over) ends the fence with that error on every node.
//
// A node stays until its own clients ended and every other node said it is
// done (or left), as a resource manager's daemon stays while the job runs
// elsewhere: a server may still have messages to send for its dead clients
// (an election's vote), and the others' operations may still need it.
//
// --nodes N runs N nodes (2 to 8): three-server tests use --nodes 3.
//
// --hold FROM:TO:CODE:UNTIL makes node TO deliver the events of code CODE
// that come from node FROM only after it delivered an event of code UNTIL
// (from any node) or its server sent one (notify_event), or after 20 s: the link from FROM to TO is
// slow for that message (later messages on that link wait behind it, in order). CODE and UNTIL are
// status names (PMIX_GROUP_MEMBER_FAILED) or numbers. A test thus makes one message overtake
// another deterministically; node TO prints how many CODE events from FROM it delivered after an
// UNTIL (A) and how many of them had to wait (H; the others came late by themselves):
//   twonode host nodeTO: delivered A events from nodeFROM after UNTIL (held H)
//
// TWONODE_NO_VIEWS (environment) makes the group answer carry the endpoint
// data only, never PMIX_GROUP_MEMBERSHIP (a host that does not combine views).
//
// TWONODE_HOLD_GROUPS (environment; groupslead) makes every node hold its
// answers to group operations until a client notifies the event
// kReleaseGroups (range PMIX_RANGE_RM): a test can then make something
// happen after the servers called the group upcall and before the host
// answers. A node prints "group operations held N" when N operations were
// still unanswered at the end (the library never ended them).
// TWONODE_HOLD_GROUPS=node1 holds node1's answers only.
//
// --stagger MS makes node1 (--stagger-node K: node K) wait MS milliseconds
// before it registers its clients and the job, so that the other nodes'
// clients ask it for data, or tell it of groups, before it knows its ranks.
//
// Each node prints one summary line (checked by the ctest cases):
//   twonode host nodeN: fences F (with data D, B bytes), dmodex asked A, served S
// and, when there were some (groupsft),
//   twonode host nodeN: fault-tolerant fences T, ended reported E (ranks R)
//   twonode host nodeN: fences failed before the hand-over X
// Exit status: 0 when all clients exited 0; else the first failure
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
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

extern char **environ;

namespace {

constexpr int kMaxNodes = 8;
constexpr int kRanksPerNode = 2;
int g_nnodes = 2;        // --nodes
int g_stagger_node = 1;  // --stagger-node

uint32_t job_size() {
    return static_cast<uint32_t>(g_nnodes * kRanksPerNode);
}

int node_of(pmix_rank_t rank) {
    return static_cast<int>(rank / kRanksPerNode);
}

// ---------------------------------------------------------------------------------------------
// Messages between the nodes: a fixed header, then `length` payload bytes.

// A test's event releasing the held group answers (TWONODE_HOLD_GROUPS);
// tests/integration/group_leader_client.c uses the same code.
constexpr pmix_status_t kReleaseGroups = PMIX_EXTERNAL_ERR_BASE - 140;

enum class MsgType : uint32_t {
    fence = 1,
    dmodex_request = 2,
    dmodex_answer = 3,
    done = 4,
    group = 5,  // id: context id proposed; payload: GroupKey + endpoint data
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
// One node's state. Upcalls run on the server's progress thread; one reader
// thread per other node; the main thread waits for the children.

// One node's part of a fence.
struct FencePart {
    bool in = false;
    pmix_status_t status = PMIX_SUCCESS;  // its PMIX_LOCAL_COLLECTIVE_STATUS
    std::vector<pmix_rank_t> ended;       // its PMIXPP_FENCE_ENDED
    std::vector<char> data;
};

// A fence, by participant set and per-set sequence ("0,2,3#1").
struct PendingFence {
    std::map<int, FencePart> parts;         // by node
    std::vector<pmix_rank_t> participants;  // named, wildcards expanded (from my part)
    std::set<int> nodes;                    // the participants' nodes (from my part)
    bool delivered = false;                 // my server got its answer
    pmix_modex_cbfunc_t cbfunc = nullptr;
    void *cbdata = nullptr;
};

// One node's part of a group operation.
struct GroupPart {
    bool in = false;
    uint64_t cid = 0;        // its context id proposal (0: none)
    std::vector<char> data;  // its PMIX_GROUP_ENDPT_DATA
    // Its view of the membership (PMIX_GROUP_MEMBERSHIP directive; none:
    // every proc named).
    bool view = false;
    std::vector<pmix_proc_t> members;
    // Its PMIX_LOCAL_COLLECTIVE_STATUS: a node whose construct ended before
    // its host was called still sends its part; the answer is then the
    // first error (groupslead).
    pmix_status_t status = PMIX_SUCCESS;
};

// One group operation, matched across the nodes by (op, group id): the
// server library names each operation by its id, so concurrent constructs
// over the same processes stay apart (docs/groups.md, "For host writers").
struct PendingGroup {
    std::map<int, GroupPart> parts;  // by node
    std::set<int> nodes;             // the members' nodes (from my upcall)
    bool assign = false;
    pmix_info_cbfunc_t cbfunc = nullptr;
    void *cbdata = nullptr;
};

struct PendingDmodex {
    int node;  // asked
    pmix_modex_cbfunc_t cbfunc;
    void *cbdata;
};

// The link to another node.
struct Peer {
    int fd = -1;
    std::mutex write_mutex;           // one message at a time on fd
    bool done = false, gone = false;  // under Node::mutex
};

// --hold: node `to` delivers `code` events from node `from` after an `until` event.
struct Hold {
    int from = -1, to = -1;
    pmix_status_t code = 0, until = 0;
    std::string until_name;
    bool until_seen = false;  // under Node::mutex
    unsigned held = 0;        // had to wait
    unsigned after = 0;       // delivered after an UNTIL (held or not)
};

struct Node {
    int id = 0;
    std::string nspace;
    std::vector<std::unique_ptr<Peer>> peers;  // by node; mine has no fd

    std::mutex mutex;  // everything below, and Peer::done/gone
    std::condition_variable cv;
    uint64_t next_request = 0;
    std::map<std::string, uint64_t> next_fence;  // per participant set
    std::map<std::string, PendingFence> fences;  // by "set#seq"
    std::map<uint64_t, PendingDmodex> dmodex;
    std::map<std::string, PendingGroup> groups;  // by "op:id"
    uint64_t next_context_id = 0;                // proposals: id + 1 + N * k, unique across nodes
    Hold hold;

    // statistics for the summary line
    unsigned nfences = 0, nfences_with_data = 0, nasked = 0, nserved = 0, ngroups = 0;
    unsigned nevents = 0;                     // events sent to other nodes (notify_event upcall)
    unsigned nft = 0;                         // fences with PMIX_GROUP_FT_COLLECTIVE
    std::vector<pmix_rank_t> ended_reported;  // PMIXPP_FENCE_ENDED, in order
    unsigned nfailed_here = 0;                // parts with an error status
    unsigned nviews = 0;       // group upcalls that passed this node's membership view
    bool answer_views = true;  // false (TWONODE_NO_VIEWS set): endpoint data only
    // TWONODE_HOLD_GROUPS: group answers wait in `held` until released.
    bool hold_groups = false, groups_released = false;
    std::vector<std::function<void()>> held;
    unsigned nheld_at_end = 0;  // group operations never answered
    // Held answers released because another node left before a client's
    // kReleaseGroups came: counted as never released unless that release
    // still comes (the other node may finish first; the test's release is
    // then late, not missing).
    unsigned nheld_forced = 0;
    size_t fence_bytes = 0;

    bool send(int to, MsgType type, int32_t status, uint64_t id, uint32_t rank, const char *data,
              size_t n) {
        if (to < 0 || to >= static_cast<int>(peers.size()) || peers[to]->fd < 0) return false;
        MsgHeader h{type, status, id, rank, 0, n};
        Peer &p = *peers[to];
        std::lock_guard lock(p.write_mutex);
        return write_all(p.fd, &h, sizeof h) && (n == 0 || write_all(p.fd, data, n));
    }
    // Whether node `n` (another one) has left; with `mutex` held.
    bool gone_locked(int n) const { return n != id && peers[n]->gone; }
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
// failed), and forgets the fence once every node's part is in (or that node
// left).
void complete_fence_locked(const std::string &key, std::unique_lock<std::mutex> &lock) {
    auto it = g_node.fences.find(key);
    if (it == g_node.fences.end()) return;
    PendingFence &f = it->second;
    auto in = [&f](int n) {
        auto p = f.parts.find(n);
        return p != f.parts.end() && p->second.in;
    };
    auto settled = [&] {
        for (int n : f.nodes)
            if (!in(n) && !g_node.gone_locked(n)) return false;
        return true;
    };
    if (in(g_node.id) && !f.delivered) {
        // My status first, then the other nodes' in node order.
        pmix_status_t status = f.parts[g_node.id].status;
        for (const auto &[n, part] : f.parts)
            if (status == PMIX_SUCCESS && part.in) status = part.status;
        bool all_in = true;
        for (pmix_rank_t r : f.participants) {
            bool ended = false;
            for (const auto &[n, part] : f.parts)
                ended =
                    ended || std::find(part.ended.begin(), part.ended.end(), r) != part.ended.end();
            all_in = all_in && (in(node_of(r)) || ended);
        }
        if (status != PMIX_SUCCESS || all_in) {
            // Node order: node0's blob first.
            std::vector<char> all;
            if (status == PMIX_SUCCESS)
                for (const auto &[n, part] : f.parts)
                    if (part.in) all.insert(all.end(), part.data.begin(), part.data.end());
            f.delivered = true;
            const auto cbfunc = f.cbfunc;
            void *const cbdata = f.cbdata;
            if (settled()) g_node.fences.erase(it);
            lock.unlock();
            deliver(cbfunc, cbdata, status, all);
            lock.lock();
            return;
        }
    }
    if (f.delivered && settled()) g_node.fences.erase(it);
}

// ---------------------------------------------------------------------------------------------
// server upcalls

void put_bytes(std::vector<char> &out, const void *p, size_t n);

// The nodes of `procs` (procs of another namespace or none: every node).
std::set<int> nodes_of(const pmix_proc_t procs[], size_t nprocs) {
    std::set<int> nodes;
    bool all = nprocs == 0;
    for (size_t k = 0; k < nprocs && !all; ++k) {
        if (std::strncmp(procs[k].nspace, g_node.nspace.c_str(), PMIX_MAX_NSLEN) != 0 ||
            procs[k].rank == PMIX_RANK_WILDCARD || procs[k].rank >= job_size()) {
            all = true;
        } else {
            nodes.insert(node_of(procs[k].rank));
        }
    }
    if (all)
        for (int n = 0; n < g_nnodes; ++n) nodes.insert(n);
    return nodes;
}

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
            for (pmix_rank_t r = 0; r < job_size(); ++r) participants.push_back(r);
        } else {
            known = known && procs[k].rank < job_size();
            participants.push_back(procs[k].rank);
        }
    }
    if (!known) {
        std::fprintf(stderr, "twonode host node%d: unexpected fence participants\n", g_node.id);
        return PMIX_ERR_NOT_SUPPORTED;
    }
    std::sort(participants.begin(), participants.end());
    participants.erase(std::unique(participants.begin(), participants.end()), participants.end());
    std::set<int> nodes;
    for (pmix_rank_t r : participants) nodes.insert(node_of(r));
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
    for (int n : nodes)
        if (g_node.gone_locked(n)) return PMIX_ERR_LOST_CONNECTION;
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
    f.nodes = nodes;
    f.parts[g_node.id] = std::move(part);
    lock.unlock();
    for (int n : nodes) {
        if (n != g_node.id &&
            !g_node.send(n, MsgType::fence, status, 0, 0, payload.data(), payload.size())) {
            lock.lock();
            g_node.fences.erase(key);
            return PMIX_ERR_LOST_CONNECTION;
        }
    }
    lock.lock();
    complete_fence_locked(key, lock);
    return PMIX_SUCCESS;
}

void add_info(std::vector<pmix_info_t> &v, const char *key, const void *data, pmix_data_type_t t);

// The answer to the library: every node's endpoint data and, when asked
// for, one context id. Holds its infos until the library releases them.
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

// Called with g_node.mutex held once a part of group operation `key` came:
// answers once the part of every node of its members is in.
void complete_group_locked(const std::string &key, std::unique_lock<std::mutex> &lock) {
    auto it = g_node.groups.find(key);
    if (it == g_node.groups.end()) return;
    const PendingGroup &pending = it->second;
    auto in = [&pending](int n) {
        auto p = pending.parts.find(n);
        return p != pending.parts.end() && p->second.in;
    };
    if (!in(g_node.id)) return;
    for (int n : pending.nodes)
        if (!in(n)) return;
    PendingGroup gr = std::move(it->second);
    g_node.groups.erase(it);
    auto *a = new GroupAnswer;
    for (const auto &[n, part] : gr.parts) {
        if (part.data.empty()) continue;
        pmix_byte_object_t bo{const_cast<char *>(part.data.data()), part.data.size()};
        add_info(a->info, PMIX_GROUP_ENDPT_DATA, &bo, PMIX_BYTE_OBJECT);
    }
    if (gr.assign) {
        // The lowest node's proposal: the same at every node.
        const size_t cid = gr.parts.at(*gr.nodes.begin()).cid;
        add_info(a->info, PMIX_GROUP_CONTEXT_ID, &cid, PMIX_SIZE);
    }
    std::vector<const GroupPart *> views;
    for (const auto &[n, part] : gr.parts)
        if (part.view) views.push_back(&part);
    if (!views.empty() && g_node.answer_views) {
        // The reduced membership: the lowest node's view without what
        // another node's view lacks.
        std::vector<pmix_proc_t> members;
        for (const auto &p : views.front()->members) {
            bool keep = true;
            for (const GroupPart *v : views) {
                bool here = false;
                for (const auto &q : v->members) here = here || PMIX_CHECK_PROCID(&p, &q);
                keep = keep && here;
            }
            if (keep) members.push_back(p);
        }
        pmix_data_array_t darray{PMIX_PROC, members.size(), members.data()};
        add_info(a->info, PMIX_GROUP_MEMBERSHIP, &darray, PMIX_DATA_ARRAY);
    }
    // My status first, then the other nodes' in node order.
    pmix_status_t status = gr.parts[g_node.id].status;
    for (const auto &[n, part] : gr.parts)
        if (status == PMIX_SUCCESS) status = part.status;
    auto answer = [cbfunc = gr.cbfunc, cbdata = gr.cbdata, a, status] {
        cbfunc(status, a->info.empty() ? nullptr : a->info.data(), a->info.size(), cbdata,
               release_group_answer, a);
    };
    if (hold_group_answer_locked(answer)) return;
    lock.unlock();
    answer();
    lock.lock();
}

pmix_status_t on_group(pmix_group_operation_t op, char grp[], const pmix_proc_t procs[],
                       size_t nprocs, const pmix_info_t directives[], size_t ndirs,
                       pmix_info_cbfunc_t cbfunc, void *cbdata) {
    GroupPart part;
    part.in = true;
    bool assign = false;
    for (size_t i = 0; i < ndirs; ++i) {
        const pmix_value_t &v = directives[i].value;
        if (PMIX_CHECK_KEY(&directives[i], PMIX_GROUP_MEMBERSHIP) && v.type == PMIX_DATA_ARRAY &&
            v.data.darray != nullptr && v.data.darray->type == PMIX_PROC) {
            const auto *p = static_cast<const pmix_proc_t *>(v.data.darray->array);
            part.members.assign(p, p + v.data.darray->size);
            part.view = true;
        }
        if (PMIX_CHECK_KEY(&directives[i], PMIX_GROUP_ENDPT_DATA) &&
            directives[i].value.type == PMIX_BYTE_OBJECT) {
            const auto &bo = directives[i].value.data.bo;
            part.data.assign(bo.bytes, bo.bytes + bo.size);
        }
        if (PMIX_CHECK_KEY(&directives[i], PMIX_GROUP_ASSIGN_CONTEXT_ID))
            assign = PMIX_INFO_TRUE(&directives[i]);
        if (PMIX_CHECK_KEY(&directives[i], PMIX_LOCAL_COLLECTIVE_STATUS) && v.type == PMIX_STATUS)
            part.status = v.data.status;
    }
    std::set<int> nodes = nodes_of(procs, nprocs);
    nodes.insert(g_node.id);
    // The payload: the key (op:id), a NUL, a flag (a view follows), the
    // view (u32 n, n procs), then the endpoint data.
    const std::string key = std::to_string(static_cast<int>(op)) + ":" + grp;
    std::vector<char> payload(key.begin(), key.end());
    payload.push_back('\0');
    payload.push_back(part.view ? 1 : 0);
    const uint32_t nview = static_cast<uint32_t>(part.members.size());
    put_bytes(payload, &nview, sizeof nview);
    put_bytes(payload, part.members.data(), part.members.size() * sizeof(pmix_proc_t));
    payload.insert(payload.end(), part.data.begin(), part.data.end());
    std::unique_lock lock(g_node.mutex);
    for (int n : nodes)
        if (g_node.gone_locked(n)) return PMIX_ERR_LOST_CONNECTION;
    ++g_node.ngroups;
    if (part.view) ++g_node.nviews;
    if (assign)
        part.cid = static_cast<uint64_t>(g_node.id) + 1 +
                   static_cast<uint64_t>(g_nnodes) * g_node.next_context_id++;
    const pmix_status_t local_status = part.status;
    const uint64_t proposed = part.cid;
    PendingGroup &gr = g_node.groups[key];
    gr.nodes = nodes;
    gr.assign = assign;
    gr.cbfunc = cbfunc;
    gr.cbdata = cbdata;
    gr.parts[g_node.id] = std::move(part);
    lock.unlock();
    for (int n : nodes) {
        if (n != g_node.id && !g_node.send(n, MsgType::group, local_status, proposed, 0,
                                           payload.data(), payload.size())) {
            lock.lock();
            g_node.groups.erase(key);
            return PMIX_ERR_LOST_CONNECTION;
        }
    }
    lock.lock();
    complete_group_locked(key, lock);
    return PMIX_SUCCESS;
}

// ---------------------------------------------------------------------------------------------
// events: the server's notify_event upcall (an event whose range leaves the
// node, e.g. PMIX_GROUP_LEFT to the group's members on other nodes) goes to
// the nodes of its range, which hand it to their servers with
// PMIx_Notify_event. Only what group events carry crosses: source, range and
// the infos of type string, proc, array of procs, bool and size.

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

// Hands an event from another node to this node's server.
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

// The other nodes an event goes to: those of the processes of its custom
// range (PMIX_RANGE_CUSTOM with PMIX_EVENT_CUSTOM_RANGE), else all.
std::set<int> event_nodes(pmix_data_range_t range, const pmix_info_t info[], size_t ninfo) {
    std::set<int> nodes;
    for (size_t i = 0; i < ninfo && range == PMIX_RANGE_CUSTOM && nodes.empty(); ++i) {
        if (!PMIX_CHECK_KEY(&info[i], PMIX_EVENT_CUSTOM_RANGE)) continue;
        const pmix_value_t &v = info[i].value;
        if (v.type == PMIX_PROC && v.data.proc != nullptr) {
            nodes = nodes_of(v.data.proc, 1);
        } else if (v.type == PMIX_DATA_ARRAY && v.data.darray != nullptr &&
                   v.data.darray->type == PMIX_PROC && v.data.darray->size > 0) {
            nodes = nodes_of(static_cast<const pmix_proc_t *>(v.data.darray->array),
                             v.data.darray->size);
        }
    }
    if (nodes.empty())
        for (int n = 0; n < g_nnodes; ++n) nodes.insert(n);
    nodes.erase(g_node.id);
    return nodes;
}

pmix_status_t on_notify_event(pmix_status_t code, const pmix_proc_t *source,
                              pmix_data_range_t range, pmix_info_t info[], size_t ninfo,
                              pmix_op_cbfunc_t, void *) {
    const std::vector<char> payload = encode_event(source, range, info, ninfo);
    std::set<int> to = event_nodes(range, info, ninfo);
    if (code == kReleaseGroups) {
        {
            std::lock_guard lock(g_node.mutex);
            g_node.nheld_forced = 0;  // the test did release them
        }
        release_groups();  // and every other node's, below
        to = event_nodes(PMIX_RANGE_RM, nullptr, 0);
    }
    {
        std::lock_guard lock(g_node.mutex);
        std::erase_if(to, [](int n) { return g_node.gone_locked(n); });
        if (to.empty()) return PMIX_ERR_LOST_CONNECTION;
        ++g_node.nevents;
        if (code == g_node.hold.until && g_node.hold.to == g_node.id) {
            g_node.hold.until_seen = true;  // --hold: this node forwarded an UNTIL
            g_node.cv.notify_all();
        }
    }
    bool sent = false;
    for (int n : to)
        sent = g_node.send(n, MsgType::event, code, 0, 0, payload.data(), payload.size()) || sent;
    return sent ? PMIX_OPERATION_SUCCEEDED : PMIX_ERR_LOST_CONNECTION;
}

pmix_status_t on_direct_modex(const pmix_proc_t *proc, const pmix_info_t[], size_t,
                              pmix_modex_cbfunc_t cbfunc, void *cbdata) {
    if (std::strncmp(proc->nspace, g_node.nspace.c_str(), PMIX_MAX_NSLEN) != 0 ||
        proc->rank >= job_size() || node_of(proc->rank) == g_node.id) {
        return PMIX_ERR_NOT_FOUND;  // not a proc of another node
    }
    const int node = node_of(proc->rank);
    std::unique_lock lock(g_node.mutex);
    if (g_node.gone_locked(node)) return PMIX_ERR_LOST_CONNECTION;
    const uint64_t id = g_node.next_request++;
    ++g_node.nasked;
    g_node.dmodex[id] = PendingDmodex{node, cbfunc, cbdata};
    lock.unlock();
    if (!g_node.send(node, MsgType::dmodex_request, 0, id, proc->rank, nullptr, 0)) {
        lock.lock();
        g_node.dmodex.erase(id);
        return PMIX_ERR_LOST_CONNECTION;
    }
    return PMIX_SUCCESS;
}

// A request from another node, answered by PMIx_server_dmodex_request.
struct DmodexAsked {
    int node;
    uint64_t id;
};

// The answer to a request from another node, from PMIx_server_dmodex_request.
// `data` belongs to the library: send it before returning.
void on_dmodex_answer(pmix_status_t status, char *data, size_t sz, void *cbdata) {
    auto *asked = static_cast<DmodexAsked *>(cbdata);
    g_node.send(asked->node, MsgType::dmodex_answer, status, asked->id, 0, data,
                data != nullptr ? sz : 0);
    delete asked;
}

// ---------------------------------------------------------------------------------------------
// the reader threads, one per other node

// Node `from` left: fail whatever still waits for it. Called with
// g_node.mutex held; returns with it released.
void peer_gone(int from, std::unique_lock<std::mutex> &lock) {
    // An operation with every part in is complete, not lost: the other node
    // may answer and leave (a node whose client failed leaves at once)
    // while our upcall, between its send and its own completion, has
    // released the mutex.
    g_node.peers[from]->gone = true;
    std::vector<std::string> keys;
    for (const auto &[key, f] : g_node.fences) keys.push_back(key);
    for (const auto &key : keys) complete_fence_locked(key, lock);
    keys.clear();
    for (const auto &[key, gr] : g_node.groups) keys.push_back(key);
    for (const auto &key : keys) complete_group_locked(key, lock);
    // What waits for that node's part: lost.
    std::vector<PendingFence> fences;
    for (auto it = g_node.fences.begin(); it != g_node.fences.end();) {
        PendingFence &f = it->second;
        const auto p = f.parts.find(from);
        if (f.delivered || f.nodes.count(from) == 0 || (p != f.parts.end() && p->second.in)) {
            ++it;
            continue;
        }
        fences.push_back(std::move(f));
        it = g_node.fences.erase(it);
    }
    std::vector<PendingDmodex> requests;
    for (auto it = g_node.dmodex.begin(); it != g_node.dmodex.end();) {
        if (it->second.node != from) {
            ++it;
            continue;
        }
        requests.push_back(it->second);
        it = g_node.dmodex.erase(it);
    }
    std::vector<PendingGroup> groups;
    for (auto it = g_node.groups.begin(); it != g_node.groups.end();) {
        PendingGroup &gr = it->second;
        const auto p = gr.parts.find(from);
        if (gr.nodes.count(from) == 0 || gr.parts.count(g_node.id) == 0 ||
            (p != gr.parts.end() && p->second.in)) {
            ++it;
            continue;
        }
        groups.push_back(std::move(gr));
        it = g_node.groups.erase(it);
    }
    g_node.nheld_forced += static_cast<unsigned>(g_node.held.size());
    g_node.cv.notify_all();
    lock.unlock();
    for (auto &f : fences) deliver(f.cbfunc, f.cbdata, PMIX_ERR_LOST_CONNECTION, {});
    for (auto &r : requests) deliver(r.cbfunc, r.cbdata, PMIX_ERR_LOST_CONNECTION, {});
    for (auto &gr : groups) {
        {
            std::lock_guard relock(g_node.mutex);
            ++g_node.nheld_at_end;
        }
        gr.cbfunc(PMIX_ERR_LOST_CONNECTION, nullptr, 0, gr.cbdata, nullptr, nullptr);
    }
    release_groups();  // answers still held (never released by the test)
}

// --hold: an event from `from` that node TO must deliver after an UNTIL
// event waits here (with g_node.mutex held), so that later messages on the
// link wait too.
void hold_event_locked(int from, pmix_status_t code, std::unique_lock<std::mutex> &lock) {
    Hold &h = g_node.hold;
    if (h.to != g_node.id || h.from != from || h.code != code) return;
    if (!h.until_seen) {
        ++h.held;
        g_node.cv.wait_for(lock, std::chrono::seconds(20), [&h] { return h.until_seen; });
    }
    if (h.until_seen) ++h.after;
}

void serve_peer(int from) {
    const int fd = g_node.peers[from]->fd;
    for (;;) {
        MsgHeader h{};
        std::vector<char> payload;
        bool ok = read_all(fd, &h, sizeof h);
        if (ok && h.length > 0) {
            payload.resize(h.length);
            ok = read_all(fd, payload.data(), payload.size());
        }
        std::unique_lock lock(g_node.mutex);
        if (!ok) {
            peer_gone(from, lock);
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
                FencePart &part = g_node.fences[key].parts[from];
                part.in = true;
                part.status = h.status;
                part.ended.resize(nended);
                if (nended > 0)
                    std::memcpy(part.ended.data(), payload.data() + at,
                                nended * sizeof(pmix_rank_t));
                at += nended * sizeof(pmix_rank_t);
                part.data.assign(payload.begin() + static_cast<std::ptrdiff_t>(at), payload.end());
                complete_fence_locked(key, lock);
                break;
            }
            case MsgType::dmodex_request: {
                ++g_node.nserved;
                lock.unlock();
                pmix_proc_t proc{};
                PMIX_LOAD_PROCID(&proc, g_node.nspace.c_str(), h.rank);
                auto *asked = new DmodexAsked{from, h.id};
                pmix_status_t rc = PMIx_server_dmodex_request(&proc, on_dmodex_answer, asked);
                if (rc != PMIX_SUCCESS) {
                    delete asked;
                    g_node.send(from, MsgType::dmodex_answer, rc, h.id, 0, nullptr, 0);
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
                GroupPart &part = g_node.groups[key].parts[from];
                part.in = true;
                part.view = view;
                part.members.resize(nview);
                if (nview > 0)  // data() of an empty vector may be NULL
                    std::memcpy(part.members.data(), payload.data() + at,
                                nview * sizeof(pmix_proc_t));
                at += nview * sizeof(pmix_proc_t);
                part.cid = h.id;
                part.status = h.status;
                part.data.assign(payload.begin() + static_cast<std::ptrdiff_t>(at), payload.end());
                complete_group_locked(key, lock);
                break;
            }
            case MsgType::event:
                hold_event_locked(from, h.status, lock);
                lock.unlock();
                if (h.status == kReleaseGroups) {
                    release_groups();
                    break;
                }
                deliver_event(h.status, payload);
                if (h.status == g_node.hold.until && g_node.hold.to == g_node.id) {
                    lock.lock();
                    g_node.hold.until_seen = true;
                    g_node.cv.notify_all();
                }
                break;
            case MsgType::done:
                g_node.peers[from]->done = true;
                g_node.cv.notify_all();
                break;
            default:
                std::fprintf(stderr, "twonode host node%d: unknown message %u from node%d\n",
                             g_node.id, static_cast<unsigned>(h.type), from);
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

// The job as every node registers it; only the node-local keys differ.
std::vector<pmix_info_t> job_info(int node) {
    std::vector<pmix_info_t> info;
    std::string nodes, ppn;
    for (int n = 0; n < g_nnodes; ++n) {
        nodes += (n ? "," : "") + node_name(n);
        ppn += n ? ";" : "";
        for (int r = 0; r < kRanksPerNode; ++r)
            ppn += (r ? "," : "") + std::to_string(n * kRanksPerNode + r);
    }
    char *node_map = nullptr, *proc_map = nullptr;
    PMIx_generate_regex(nodes.c_str(), &node_map);
    PMIx_generate_ppn(ppn.c_str(), &proc_map);
    const uint32_t size = job_size(), nnodes = static_cast<uint32_t>(g_nnodes);
    const uint32_t local = kRanksPerNode, one = 1, zero = 0;
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
    for (uint32_t r = 0; r < size; ++r) {
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

// A node that cannot set up its part of the job stops at once; the other
// nodes see the sockets close and fail what waits for it.
[[noreturn]] void node_failed(const std::string &me, const char *what, pmix_status_t rc) {
    std::fprintf(stderr, "%s: %s: %s\n", me.c_str(), what, PMIx_Error_string(rc));
    std::fflush(nullptr);
    std::_Exit(1);
}

// Whether every other node said it is done or left; with g_node.mutex held.
bool others_finished_locked() {
    for (int n = 0; n < g_nnodes; ++n)
        if (n != g_node.id && !g_node.peers[n]->done && !g_node.peers[n]->gone) return false;
    return true;
}

int run_node(int node, const std::vector<int> &fds, const std::string &nspace, long timeout,
             long stagger_ms, char **child_argv) {
    g_node.id = node;
    g_node.nspace = nspace;
    for (int n = 0; n < g_nnodes; ++n) {
        g_node.peers.push_back(std::make_unique<Peer>());
        g_node.peers.back()->fd = fds[static_cast<size_t>(n)];
    }
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
    std::vector<std::thread> readers;
    for (int n = 0; n < g_nnodes; ++n)
        if (n != node) readers.emplace_back(serve_peer, n);
    if (node == g_stagger_node && stagger_ms > 0)
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

    // Keep serving the other nodes until their clients are done too, also
    // when ours failed: a resource manager's daemon stays while the job runs
    // elsewhere. Our server may still have to speak for its dead clients (an
    // election's vote once its last voter died), and a node that left at once
    // made the other nodes' servers wait for that message for ever.
    for (int n = 0; n < g_nnodes; ++n)
        if (n != node) g_node.send(n, MsgType::done, 0, 0, 0, nullptr, 0);
    {
        std::unique_lock lock(g_node.mutex);
        g_node.cv.wait_until(lock, deadline + std::chrono::seconds(5), others_finished_locked);
    }
    // Each reader sees its link end once the other node shut it too.
    for (int n = 0; n < g_nnodes; ++n)
        if (n != node) shutdown(g_node.peers[n]->fd, SHUT_WR);
    for (auto &t : readers) t.join();

    for (const auto &proc : local) PMIx_server_deregister_client(&proc, nullptr, nullptr);
    PMIx_server_deregister_nspace(ns, nullptr, nullptr);
    PMIx_server_finalize();
    for (int n = 0; n < g_nnodes; ++n)
        if (n != node) close(g_node.peers[n]->fd);
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
    if (g_node.hold.to == node)
        std::printf("%s: delivered %u events from node%d after %s (held %u)\n", me.c_str(),
                    g_node.hold.after, g_node.hold.from, g_node.hold.until_name.c_str(),
                    g_node.hold.held);
    std::fflush(stdout);
    return status;
}

int usage() {
    std::fputs(
        "usage: twonode_host [--nodes N] [--timeout SECONDS] [--stagger MS] [--stagger-node K]\n"
        "                    [--hold FROM:TO:CODE:UNTIL] program [args...]\n",
        stderr);
    return 2;
}

// A status by its number or its name: PMIX_GROUP_MEMBER_FAILED, or as
// PMIx_Error_string says it (GROUP-MEMBER-FAILED); false if neither.
bool parse_status(const std::string &text, pmix_status_t &out) {
    char *end = nullptr;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (!text.empty() && *end == '\0') {
        out = static_cast<pmix_status_t>(v);
        return true;
    }
    std::string name = text;
    for (const char *prefix : {"PMIX_ERR_", "PMIX_"}) {
        if (name.rfind(prefix, 0) == 0) {
            name.erase(0, std::strlen(prefix));
            break;
        }
    }
    std::replace(name.begin(), name.end(), '_', '-');
    for (pmix_status_t c = 0; c > -2000; --c) {
        if (name == PMIx_Error_string(c)) {
            out = c;
            return true;
        }
    }
    return false;
}

// --hold FROM:TO:CODE:UNTIL
bool parse_hold(const std::string &spec, Hold &h) {
    std::vector<std::string> parts;
    size_t at = 0;
    for (size_t colon; (colon = spec.find(':', at)) != std::string::npos; at = colon + 1)
        parts.push_back(spec.substr(at, colon - at));
    parts.push_back(spec.substr(at));
    if (parts.size() != 4) return false;
    char *end = nullptr;
    h.from = static_cast<int>(std::strtol(parts[0].c_str(), &end, 10));
    if (parts[0].empty() || *end != '\0') return false;
    h.to = static_cast<int>(std::strtol(parts[1].c_str(), &end, 10));
    if (parts[1].empty() || *end != '\0') return false;
    h.until_name = parts[3];
    return parse_status(parts[2], h.code) && parse_status(parts[3], h.until) && h.from != h.to &&
           h.from >= 0 && h.to >= 0;
}

}  // namespace

int main(int argc, char **argv) {
    long timeout = 60, stagger_ms = 0;
    int i = 1;
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        if (std::strcmp(argv[i], "--hold") == 0) {
            if (!parse_hold(argv[i + 1], g_node.hold)) return usage();
            continue;
        }
        char *end = nullptr;
        const long v = std::strtol(argv[i + 1], &end, 10);
        if (*end != '\0') return usage();
        if (std::strcmp(argv[i], "--timeout") == 0 && v >= 1) {
            timeout = v;
        } else if (std::strcmp(argv[i], "--stagger") == 0 && v >= 0) {
            stagger_ms = v;
        } else if (std::strcmp(argv[i], "--stagger-node") == 0 && v >= 0 && v < kMaxNodes) {
            g_stagger_node = static_cast<int>(v);
        } else if (std::strcmp(argv[i], "--nodes") == 0 && v >= 2 && v <= kMaxNodes) {
            g_nnodes = static_cast<int>(v);
        } else {
            return usage();
        }
    }
    if (i >= argc || g_node.hold.from >= g_nnodes || g_node.hold.to >= g_nnodes ||
        g_stagger_node >= g_nnodes)
        return usage();
    if (access(argv[i], X_OK) != 0) {
        std::fprintf(stderr, "twonode_host: cannot run %s\n", argv[i]);
        return 127;
    }
    std::vector<char *> child_argv(argv + i, argv + argc);
    child_argv.push_back(nullptr);
    const std::string nspace = "twonode." + std::to_string(getpid());

    // fds[a][b]: node a's end of the link between a and b.
    std::vector<std::vector<int>> fds(static_cast<size_t>(g_nnodes),
                                      std::vector<int>(static_cast<size_t>(g_nnodes), -1));
    for (int a = 0; a < g_nnodes; ++a) {
        for (int b = a + 1; b < g_nnodes; ++b) {
            int sv[2];
            if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
                std::perror("twonode_host: socketpair");
                return 1;
            }
            fds[a][b] = sv[0];
            fds[b][a] = sv[1];
        }
    }
    auto close_all_but = [&fds](int keep) {
        for (int a = 0; a < g_nnodes; ++a)
            for (int fd : fds[static_cast<size_t>(a)])
                if (a != keep && fd >= 0) close(fd);
    };
    std::fflush(stdout);
    std::vector<pid_t> nodes(static_cast<size_t>(g_nnodes), -1);
    for (int n = 0; n < g_nnodes; ++n) {
        nodes[n] = fork();
        if (nodes[n] == 0) {
            close_all_but(n);
            std::exit(run_node(n, fds[static_cast<size_t>(n)], nspace, timeout, stagger_ms,
                               child_argv.data()));
        }
        if (nodes[n] < 0) {
            std::perror("twonode_host: fork");
            return 1;
        }
    }
    close_all_but(-1);

    // Each node bounds its own wait; this is the last resort.
    using clock = std::chrono::steady_clock;
    const auto deadline = clock::now() + std::chrono::seconds(timeout + 20);
    int status = 0, remaining = g_nnodes;
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
