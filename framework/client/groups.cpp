// GroupTable and the group requests (groups.hpp; server side:
// framework/server/groups.cpp; wire layout: wire/protocol.hpp).
#include "client/groups.hpp"

#include <pmix.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "client/client.hpp"
#include "client/request_util.hpp"
#include "event/event.hpp"
#include "event/process_events.hpp"
#include "mca/logging.hpp"
#include "wire/codec.hpp"

namespace pmixpp::client {

using wire::BodyReader;
using wire::BodyWriter;
using wire::Command;

namespace {

std::string nspace_of(const pmix_proc_t &p) {
    return std::string(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN + 1));
}

bool same(const pmix_proc_t &a, const pmix_proc_t &b) {
    return nspace_of(a) == nspace_of(b) && a.rank == b.rank;
}

bool names(const pmix_proc_t &member, const pmix_proc_t &p) {
    return nspace_of(member) == nspace_of(p) &&
           (member.rank == PMIX_RANK_WILDCARD || member.rank == p.rank);
}

// The group a Get asks about: PMIX_GROUP_ID among the qualifiers, else the
// target's nspace when it names a group.
std::string group_asked(const pmix_proc_t &target, std::span<const pmix_info_t> q) {
    for (const auto &i : q) {
        if (PMIX_CHECK_KEY(&i, PMIX_GROUP_ID) && i.value.type == PMIX_STRING &&
            i.value.data.string != nullptr)
            return i.value.data.string;
    }
    return nspace_of(target);
}

pmix_value_t *new_value() {
    return static_cast<pmix_value_t *>(std::calloc(1, sizeof(pmix_value_t)));
}

}  // namespace

GroupTable &GroupTable::instance() {
    static auto *table = new GroupTable;  // never destroyed: used until exit
    return *table;
}

void GroupTable::record(const std::string &id, GroupInfo info) {
    std::lock_guard lock(mutex_);
    groups_[id] = std::move(info);
    any_ = true;
}

void GroupTable::forget(const std::string &id) {
    std::lock_guard lock(mutex_);
    groups_.erase(id);
    any_ = !groups_.empty();
}

void GroupTable::remove_member(const std::string &id, const pmix_proc_t &proc) {
    std::lock_guard lock(mutex_);
    auto it = groups_.find(id);
    if (it == groups_.end()) return;
    std::erase_if(it->second.members, [&](const pmix_proc_t &m) { return same(m, proc); });
}

void GroupTable::clear() {
    std::lock_guard lock(mutex_);
    groups_.clear();
    any_ = false;
}

bool GroupTable::known(const std::string &id) const {
    std::lock_guard lock(mutex_);
    return groups_.count(id) != 0;
}

pmix_status_t GroupTable::translate(std::vector<pmix_proc_t> &procs) const {
    if (!any_) return PMIX_SUCCESS;
    std::lock_guard lock(mutex_);
    if (groups_.empty()) return PMIX_SUCCESS;
    std::vector<pmix_proc_t> out;
    for (const auto &p : procs) {
        auto it = groups_.find(nspace_of(p));
        if (it == groups_.end()) {
            out.push_back(p);
            continue;
        }
        const auto &members = it->second.members;
        if (p.rank == PMIX_RANK_WILDCARD) {
            out.insert(out.end(), members.begin(), members.end());
        } else if (p.rank < members.size()) {
            out.push_back(members[p.rank]);
        } else {
            return PMIX_ERR_BAD_PARAM;
        }
    }
    procs = std::move(out);
    return PMIX_SUCCESS;
}

namespace {

// The keys whose processes may name a group: the event's (or a handler's
// source) custom range and its affected processes (docs/groups.md).
bool addresses_procs(const pmix_info_t &i) {
    return PMIX_CHECK_KEY(&i, PMIX_EVENT_CUSTOM_RANGE) ||
           PMIX_CHECK_KEY(&i, PMIX_EVENT_AFFECTED_PROC) ||
           PMIX_CHECK_KEY(&i, PMIX_EVENT_AFFECTED_PROCS);
}

}  // namespace

pmix_status_t GroupTable::translate_range(const pmix_info_t *info, std::size_t ninfo,
                                          wire::InfoArray &out) const {
    if (!any_ || info == nullptr) return PMIX_SUCCESS;
    bool names_group = false;
    {
        std::lock_guard lock(mutex_);
        for (std::size_t i = 0; i < ninfo && !names_group; ++i) {
            if (!addresses_procs(info[i])) continue;
            for (const auto &p : events::procs_of(info[i].value))
                names_group = names_group || groups_.count(nspace_of(p)) != 0;
        }
    }
    if (!names_group) return PMIX_SUCCESS;
    wire::InfoArray copy = wire::InfoArray::copy_of(info, ninfo);
    for (std::size_t i = 0; i < copy.size(); ++i) {
        pmix_info_t &entry = copy.data()[i];
        if (!addresses_procs(entry)) continue;
        std::vector<pmix_proc_t> procs = events::procs_of(entry.value);
        if (pmix_status_t rc = translate(procs); rc != PMIX_SUCCESS) return rc;
        PMIx_Value_destruct(&entry.value);
        if (PMIX_CHECK_KEY(&entry, PMIX_EVENT_AFFECTED_PROC) && procs.size() == 1) {
            PMIx_Value_load(&entry.value, procs.data(), PMIX_PROC);
            continue;
        }
        // The members of a group as the single affected process: all of them.
        if (PMIX_CHECK_KEY(&entry, PMIX_EVENT_AFFECTED_PROC))
            PMIX_LOAD_KEY(entry.key, PMIX_EVENT_AFFECTED_PROCS);
        pmix_data_array_t darray{PMIX_PROC, procs.size(), procs.empty() ? nullptr : procs.data()};
        PMIx_Value_load(&entry.value, &darray, PMIX_DATA_ARRAY);
    }
    out = std::move(copy);
    return PMIX_SUCCESS;
}

bool GroupTable::translate_one(pmix_proc_t &target, pmix_status_t &rc) const {
    if (!any_) return false;
    std::lock_guard lock(mutex_);
    auto it = groups_.find(nspace_of(target));
    if (it == groups_.end() || target.rank == PMIX_RANK_WILDCARD) return false;
    const auto &members = it->second.members;
    if (target.rank >= members.size()) {
        rc = PMIX_ERR_BAD_PARAM;
        return true;
    }
    target = members[target.rank];
    rc = PMIX_SUCCESS;
    return true;
}

std::optional<pmix_status_t> GroupTable::get(const pmix_proc_t &target, const char *key,
                                             std::span<const pmix_info_t> qualifiers,
                                             pmix_value_t **out) const {
    if (key == nullptr) return std::nullopt;
    // Every PMIx_Get passes here first: compare in place, allocate nothing.
    const std::string_view k = key;
    if (k != PMIX_GROUP_NAMES && k != PMIX_GROUP_MEMBERSHIP && k != PMIX_GROUP_CONTEXT_ID &&
        k != PMIX_GROUP_LOCAL_CID)
        return std::nullopt;
    std::lock_guard lock(mutex_);
    pmix_value_t *v = new_value();
    if (v == nullptr) return PMIX_ERR_NOMEM;
    pmix_status_t rc = PMIX_ERR_NOT_FOUND;
    if (k == PMIX_GROUP_NAMES) {
        // The groups `target` belongs to, among those this process knows.
        std::vector<char *> ids;
        for (const auto &[id, g] : groups_) {
            if (std::any_of(g.members.begin(), g.members.end(),
                            [&](const auto &m) { return names(m, target); }))
                ids.push_back(const_cast<char *>(id.c_str()));
        }
        pmix_data_array_t darray{PMIX_STRING, ids.size(), ids.empty() ? nullptr : ids.data()};
        rc = PMIx_Value_load(v, &darray, PMIX_DATA_ARRAY);
    } else {
        auto it = groups_.find(group_asked(target, qualifiers));
        if (it != groups_.end()) {
            const GroupInfo &g = it->second;
            if (k == PMIX_GROUP_MEMBERSHIP) {
                pmix_data_array_t darray{
                    PMIX_PROC, g.members.size(),
                    const_cast<pmix_proc_t *>(g.members.empty() ? nullptr : g.members.data())};
                rc = PMIx_Value_load(v, &darray, PMIX_DATA_ARRAY);
            } else if (k == PMIX_GROUP_CONTEXT_ID && g.context_id) {
                rc = PMIx_Value_load(v, &*g.context_id, PMIX_SIZE);
            } else if (k == PMIX_GROUP_LOCAL_CID) {
                // The target's own (or, addressed by group rank, that member's).
                pmix_proc_t who = target;
                if (nspace_of(target) == it->first && target.rank < g.members.size())
                    who = g.members[target.rank];
                for (const auto &[p, cid] : g.local_cids) {
                    if (!same(p, who)) continue;
                    const std::size_t c = static_cast<std::size_t>(cid);
                    rc = PMIx_Value_load(v, &c, PMIX_SIZE);
                }
            }
        }
    }
    if (rc != PMIX_SUCCESS) {
        std::free(v);
        return rc;
    }
    *out = v;
    return PMIX_SUCCESS;
}

// ---------------------------------------------------------------------------------------------
// requests

namespace {

// The reply of a construct, an invite or an accepted join (wire/protocol.hpp,
// group_construct): on success the group goes into the table and the other
// nspaces' job info and the members' data into the store.
void read_group_reply(const std::string &id, pmix_status_t s, BodyReader &r,
                      const std::function<void(pmix_status_t, wire::InfoArray)> &done) {
    // PARTIAL_SUCCESS: formed without some optional members.
    if (s != PMIX_SUCCESS && s != PMIX_ERR_PARTIAL_SUCCESS) {
        done(s, {});
        return;
    }
    wire::InfoArray results;
    GroupInfo g;
    std::uint32_t n = 0;
    r.infos(results);
    r.u32(n);
    for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
        pmix_proc_t p{};
        std::uint64_t cid = 0;
        r.proc(p);
        r.u64(cid);
        g.local_cids.emplace_back(p, cid);
    }
    if (!r.ok()) {
        done(PMIX_ERR_UNPACK_FAILURE, {});
        return;
    }
    // The other nspaces' job info and the members' data: into our store.
    const pmix_status_t st = Client::instance().store_connect_reply(r);
    if (st != PMIX_SUCCESS) {
        done(st, {});
        return;
    }
    for (const auto &i : results.span()) {
        if (PMIX_CHECK_KEY(&i, PMIX_GROUP_MEMBERSHIP)) g.members = events::procs_of(i.value);
        if (PMIX_CHECK_KEY(&i, PMIX_GROUP_CONTEXT_ID)) {
            if (auto v = wire::as_uint(i.value)) g.context_id = static_cast<std::size_t>(*v);
        }
    }
    GroupTable::instance().record(id, std::move(g));
    done(s, std::move(results));
}

}  // namespace

void group_construct_async(std::string id, std::vector<pmix_proc_t> procs, std::uint32_t timeout_s,
                           std::shared_ptr<wire::InfoArray> info,
                           std::function<void(pmix_status_t, wire::InfoArray)> done) {
    auto body = BodyWriter()
                    .str(id)
                    .procs(procs.data(), procs.size())
                    .u32(timeout_s)
                    .infos(info ? info->data() : nullptr, info ? info->size() : 0)
                    .take();
    bounded_request(Command::group_construct, std::move(body), timeout_s,
                    [id, done = std::move(done)](pmix_status_t s, BodyReader &r) {
                        read_group_reply(id, s, r, done);
                    });
}

void group_destruct_async(std::string id, std::uint32_t timeout_s,
                          std::shared_ptr<wire::InfoArray> info,
                          std::function<void(pmix_status_t)> done) {
    auto body = BodyWriter()
                    .str(id)
                    .u32(timeout_s)
                    .infos(info ? info->data() : nullptr, info ? info->size() : 0)
                    .take();
    bounded_request(Command::group_destruct, std::move(body), timeout_s,
                    [id, done = std::move(done)](pmix_status_t s, BodyReader &) {
                        if (s == PMIX_SUCCESS) GroupTable::instance().forget(id);
                        done(s);
                    });
}

void group_leave_async(std::string id, std::shared_ptr<wire::InfoArray> info,
                       std::function<void(pmix_status_t)> done) {
    auto body =
        BodyWriter().str(id).infos(info ? info->data() : nullptr, info ? info->size() : 0).take();
    bounded_request(Command::group_leave, std::move(body), 0,
                    [id, done = std::move(done)](pmix_status_t s, BodyReader &) {
                        if (s == PMIX_SUCCESS) GroupTable::instance().forget(id);
                        done(s);
                    });
}

// ---------------------------------------------------------------------------------------------
// invite method

void group_invite_async(std::string id, std::vector<pmix_proc_t> procs, std::uint32_t timeout_s,
                        std::shared_ptr<wire::InfoArray> info,
                        std::function<void(pmix_status_t, wire::InfoArray)> done) {
    auto body = BodyWriter()
                    .str(id)
                    .procs(procs.data(), procs.size())
                    .u32(timeout_s)
                    .infos(info ? info->data() : nullptr, info ? info->size() : 0)
                    .take();
    // Bounded by the server's timer (PMIX_TIMEOUT of the invite), which answers first.
    bounded_request(Command::group_invite, std::move(body), timeout_s,
                    [id, done = std::move(done)](pmix_status_t s, BodyReader &r) {
                        read_group_reply(id, s, r, done);
                    });
}

void group_join_async(std::string id, pmix_proc_t leader, pmix_group_opt_t opt,
                      std::uint32_t timeout_s, std::shared_ptr<wire::InfoArray> info,
                      std::function<void(pmix_status_t, wire::InfoArray)> done) {
    auto body = BodyWriter()
                    .str(id)
                    .proc(leader)
                    .u8(static_cast<std::uint8_t>(opt))
                    .u32(timeout_s)
                    .infos(info ? info->data() : nullptr, info ? info->size() : 0)
                    .take();
    bounded_request(Command::group_join, std::move(body), timeout_s,
                    [id, opt, done = std::move(done)](pmix_status_t s, BodyReader &r) {
                        if (opt != PMIX_GROUP_ACCEPT) {
                            done(s, {});  // declined: no group to read
                            return;
                        }
                        read_group_reply(id, s, r, done);
                    });
}

void Client::handle_group_ask(wire::Frame &frame) {
    BodyReader r(frame.body);
    std::string id;
    r.str(id);
    auto ev = events::Event::read(r);
    if (!ev || !r.finished()) {
        mca::framework_logger("client")->warn("client: malformed group_ask message");
        return;
    }
    const pmix_status_t code = ev->status;
    pmix_proc_t about = ev->affected.empty() ? pmix_proc_t{} : ev->affected.front();
    // The handlers' decision, from the chain's results: a handler that
    // returned PMIX_GROUP_CONSTRUCT_ABORT aborts; one that returned
    // PMIX_GROUP_LEADER (true) volunteers to lead.
    events::ProcessEvents::instance().deliver(
        std::make_shared<const events::Event>(std::move(*ev)), std::nullopt,
        [id, code, about](std::span<const pmix_info_t> results) {
            pmix_status_t decision = PMIX_SUCCESS;
            bool volunteer = false;
            for (const auto &i : results) {
                if (i.value.type == PMIX_STATUS &&
                    i.value.data.status == PMIX_GROUP_CONSTRUCT_ABORT)
                    decision = PMIX_GROUP_CONSTRUCT_ABORT;
                if (PMIX_CHECK_KEY(&i, PMIX_GROUP_LEADER) && mca::info_true(i)) volunteer = true;
            }
            auto body = BodyWriter()
                            .str(id)
                            .i32(code)
                            .proc(about)
                            .i32(decision)
                            .u8(volunteer ? 1 : 0)
                            .take();
            Client::instance().request(Command::group_decision, std::move(body),
                                       [](pmix_status_t, BodyReader &) {});
        });
}

}  // namespace pmixpp::client
