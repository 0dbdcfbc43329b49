// Process sets on the server side: see process_sets.hpp.
#include "server/process_sets.hpp"

#include <algorithm>
#include <cstring>

#include "mca/logging.hpp"
#include "server/info_build.hpp"
#include "server/upcall_results.hpp"
#include "wire/codec.hpp"

namespace pmixpp::server {

namespace {

using mca::as_u32;
using mca::find_info;
using mca::info_members;

auto log() {
    return mca::framework_logger("server");
}

// Whether `member` (a proc, or a whole job by PMIX_RANK_WILDCARD) names `proc`.
bool names(const pmix_proc_t &member, const pmix_proc_t &proc) {
    return std::strncmp(member.nspace, proc.nspace, PMIX_MAX_NSLEN) == 0 &&
           (member.rank == PMIX_RANK_WILDCARD || member.rank == proc.rank);
}

// The names a PMIX_PSET_NAMES value carries: a DATA_ARRAY of STRING, or one
// STRING (a comma list, as a launcher's command line gives them).
std::vector<std::string> set_names(const pmix_value_t &v) {
    std::vector<std::string> out;
    auto add = [&](const char *s) {
        if (s == nullptr) return;
        std::string all(s);
        std::size_t start = 0;
        while (start <= all.size()) {
            const std::size_t comma = all.find(',', start);
            std::string one =
                all.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
            if (!one.empty()) out.push_back(std::move(one));
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
    };
    if (v.type == PMIX_STRING) {
        add(v.data.string);
    } else if (v.type == PMIX_DATA_ARRAY && v.data.darray != nullptr &&
               v.data.darray->type == PMIX_STRING && v.data.darray->array != nullptr) {
        const auto *s = static_cast<char *const *>(v.data.darray->array);
        for (std::size_t k = 0; k < v.data.darray->size; ++k) add(s[k]);
    }
    return out;
}

}  // namespace

ProcessSets::ProcessSets(const ClientTable &clients, RaiseFn raise)
    : clients_(clients), raise_(std::move(raise)) {}

pmix_status_t ProcessSets::define(const std::string &name, std::vector<pmix_proc_t> members) {
    if (name.empty() || name.size() > PMIX_MAX_NSLEN || members.empty()) return PMIX_ERR_BAD_PARAM;
    // A set's name must not be taken for a job's: an nspace addresses processes.
    if (clients_.find_job(name) != nullptr) return PMIX_ERR_BAD_PARAM;
    for (const auto &m : members) {
        if (m.nspace[0] == '\0') return PMIX_ERR_BAD_PARAM;
    }
    if (sets_.count(name) != 0) return PMIX_ERR_EXISTS;
    std::vector<pmix_info_t> info{load_info(PMIX_PSET_NAME, name.c_str(), PMIX_STRING),
                                  procs_info(PMIX_PSET_MEMBERS, members)};
    sets_[name] = ProcessSet{std::move(members), {}};
    log()->info("server: process set {} defined ({} members)", name, sets_[name].members.size());
    auto ev = events::Event::make(PMIX_PROCESS_SET_DEFINE, nullptr, PMIX_RANGE_LOCAL, info.data(),
                                  info.size());
    for (auto &i : info) PMIx_Value_destruct(&i.value);
    raise_(std::make_shared<const events::Event>(std::move(ev)));
    return PMIX_SUCCESS;
}

pmix_status_t ProcessSets::remove(const std::string &name) {
    if (name.empty()) return PMIX_ERR_BAD_PARAM;
    if (sets_.erase(name) == 0) return PMIX_ERR_NOT_FOUND;
    log()->info("server: process set {} deleted", name);
    pmix_info_t info = load_info(PMIX_PSET_NAME, name.c_str(), PMIX_STRING);
    auto ev = events::Event::make(PMIX_PROCESS_SET_DELETE, nullptr, PMIX_RANGE_LOCAL, &info, 1);
    PMIx_Value_destruct(&info.value);
    raise_(std::make_shared<const events::Event>(std::move(ev)));
    return PMIX_SUCCESS;
}

void ProcessSets::job_registered(const std::string &nspace, std::span<const pmix_info_t> info) {
    // A job registered again declares its launch sets anew.
    job_deregistered(nspace);
    for (const auto &i : info) {
        if (!PMIX_CHECK_KEY(&i, PMIX_PROC_DATA)) continue;
        const auto members = info_members(i.value).value_or(std::span<const pmix_info_t>{});
        const pmix_info_t *rank = find_info(members, PMIX_RANK);
        const pmix_info_t *psets = find_info(members, PMIX_PSET_NAMES);
        if (rank == nullptr || psets == nullptr) continue;
        const auto r = as_u32(rank->value);
        if (!r || *r >= PMIX_RANK_VALID) continue;
        pmix_proc_t proc{};
        PMIX_LOAD_PROCID(&proc, nspace.c_str(), *r);
        for (const auto &name : set_names(psets->value)) {
            auto &set = sets_[name];
            if (set.members.empty()) set.launched_with = nspace;
            // A name a host already defined stays the host's; a launch label
            // of another job's processes joins them only if it was theirs.
            if (set.launched_with != nspace) {
                log()->warn("server: process set {} of job {} is already defined elsewhere", name,
                            nspace);
                continue;
            }
            set.members.push_back(proc);
        }
    }
}

void ProcessSets::job_deregistered(const std::string &nspace) {
    std::erase_if(sets_, [&](const auto &e) { return e.second.launched_with == nspace; });
}

std::vector<std::string> ProcessSets::sets_of(const pmix_proc_t &proc) const {
    std::vector<std::string> out;
    for (const auto &[name, set] : sets_) {
        if (std::any_of(set.members.begin(), set.members.end(),
                        [&](const auto &m) { return names(m, proc); }))
            out.push_back(name);
    }
    return out;
}

bool ProcessSets::answer_query(std::span<const pmix_info_t> qualifiers, const std::string &key,
                               HostInfo &out) const {
    if (key == PMIX_QUERY_NUM_PSETS) {
        const std::size_t n = sets_.size();
        auto i = load_info(key.c_str(), &n, PMIX_SIZE);
        out.adopt(i);
        return true;
    }
    if (key == PMIX_QUERY_PSET_NAMES) {
        std::vector<std::string> all;
        for (const auto &[name, set] : sets_) all.push_back(name);
        auto i = strings_info(key.c_str(), all);
        out.adopt(i);
        return true;
    }
    if (key == PMIX_QUERY_PSET_MEMBERSHIP) {
        const auto *q = find_info(qualifiers, PMIX_PSET_NAME);
        if (q == nullptr || q->value.type != PMIX_STRING || q->value.data.string == nullptr)
            return false;
        auto s = sets_.find(q->value.data.string);
        if (s == sets_.end()) return false;
        auto i = procs_info(key.c_str(), s->second.members);
        out.adopt(i);
        return true;
    }
    if (key == PMIX_PSET_NAMES) {
        const auto *q = find_info(qualifiers, PMIX_PROCID);
        if (q == nullptr || q->value.type != PMIX_PROC || q->value.data.proc == nullptr)
            return false;
        const auto names_of = sets_of(*q->value.data.proc);
        if (names_of.empty()) return false;
        auto i = strings_info(key.c_str(), names_of);
        out.adopt(i);
        return true;
    }
    return false;
}

}  // namespace pmixpp::server
