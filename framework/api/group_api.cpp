// PMIx_Group_construct / _destruct / _leave and their _nb forms: the C entry
// points (client/groups.hpp does the work; docs/groups.md), and the invite
// method: PMIx_Group_invite / _join and their _nb forms.
#include <pmix.h>

#include <cstring>
#include <memory>

#include "client/client.hpp"
#include "client/groups.hpp"
#include "client/request_util.hpp"
#include "runtime/progress.hpp"

using pmixpp::client::GroupTable;
using pmixpp::runtime::Completion;
using pmixpp::runtime::ProgressEngine;
using pmixpp::wire::InfoArray;

namespace {

// A group id the standard allows: NUL-terminated, 1..PMIX_MAX_NSLEN characters.
bool id_ok(const char grp[]) {
    if (grp == nullptr) return false;
    const std::size_t n = strnlen(grp, PMIX_MAX_NSLEN + 1);
    return n > 0 && n <= PMIX_MAX_NSLEN;
}

std::shared_ptr<InfoArray> copy_info(const pmix_info_t info[], size_t ninfo) {
    return std::make_shared<InfoArray>(InfoArray::copy_of(info, info == nullptr ? 0 : ninfo));
}

// The results handed to a pmix_info_cbfunc_t, released by its release_fn.
struct Held {
    InfoArray results;
};

void release_held(void *cbdata) {
    delete static_cast<Held *>(cbdata);
}

// A construct or an invite: the same checks and copies, then `async` on the
// progress thread (client/groups.hpp).
using MembersAsync = void (*)(std::string, std::vector<pmix_proc_t>, std::uint32_t,
                              std::shared_ptr<InfoArray>,
                              std::function<void(pmix_status_t, InfoArray)>);
pmix_status_t start_members(MembersAsync async, const char grp[], const pmix_proc_t procs[],
                            size_t nprocs, const pmix_info_t info[], size_t ninfo,
                            std::function<void(pmix_status_t, InfoArray)> done) {
    if (pmix_status_t rc = pmixpp::client::request_gate(); rc != PMIX_SUCCESS) return rc;
    // No procs: a bootstrap construct's "add member" (the standard); an invite needs some.
    const bool add_member = nprocs == 0 && async == pmixpp::client::group_construct_async;
    if (!id_ok(grp) || ((procs == nullptr || nprocs == 0) && !add_member))
        return PMIX_ERR_BAD_PARAM;
    std::vector<pmix_proc_t> list;
    if (nprocs > 0) list.assign(procs, procs + nprocs);
    // A group used as a member stands for its members.
    if (pmix_status_t rc = GroupTable::instance().translate(list); rc != PMIX_SUCCESS) return rc;
    auto copied = copy_info(info, ninfo);
    const std::uint32_t timeout = pmixpp::client::timeout_of(info, ninfo);
    const bool posted =
        ProgressEngine::instance().post([async, id = std::string(grp), list = std::move(list),
                                         timeout, copied, done = std::move(done)]() mutable {
            async(std::move(id), std::move(list), timeout, copied, std::move(done));
        });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

pmix_status_t start_destruct(const char grp[], const pmix_info_t info[], size_t ninfo,
                             std::function<void(pmix_status_t)> done) {
    if (pmix_status_t rc = pmixpp::client::request_gate(); rc != PMIX_SUCCESS) return rc;
    if (!id_ok(grp)) return PMIX_ERR_BAD_PARAM;
    auto copied = copy_info(info, ninfo);
    const std::uint32_t timeout = pmixpp::client::timeout_of(info, ninfo);
    const bool posted = ProgressEngine::instance().post(
        [id = std::string(grp), timeout, copied, done = std::move(done)]() mutable {
            pmixpp::client::group_destruct_async(std::move(id), timeout, copied, std::move(done));
        });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

pmix_status_t start_leave(const char grp[], const pmix_info_t info[], size_t ninfo,
                          std::function<void(pmix_status_t)> done) {
    if (pmix_status_t rc = pmixpp::client::request_gate(); rc != PMIX_SUCCESS) return rc;
    if (!id_ok(grp)) return PMIX_ERR_BAD_PARAM;
    auto copied = copy_info(info, ninfo);
    const bool posted = ProgressEngine::instance().post(
        [id = std::string(grp), copied, done = std::move(done)]() mutable {
            pmixpp::client::group_leave_async(std::move(id), copied, std::move(done));
        });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

pmix_status_t start_join(const char grp[], const pmix_proc_t *leader, pmix_group_opt_t opt,
                         const pmix_info_t info[], size_t ninfo,
                         std::function<void(pmix_status_t, InfoArray)> done) {
    if (pmix_status_t rc = pmixpp::client::request_gate(); rc != PMIX_SUCCESS) return rc;
    if (!id_ok(grp) || (opt != PMIX_GROUP_ACCEPT && opt != PMIX_GROUP_DECLINE))
        return PMIX_ERR_BAD_PARAM;
    pmix_proc_t who{};  // empty: whoever leads the invitation
    if (leader != nullptr) who = *leader;
    auto copied = copy_info(info, ninfo);
    const std::uint32_t timeout = pmixpp::client::timeout_of(info, ninfo);
    const bool posted = ProgressEngine::instance().post([id = std::string(grp), who, opt, timeout,
                                                         copied, done = std::move(done)]() mutable {
        pmixpp::client::group_join_async(std::move(id), who, opt, timeout, copied, std::move(done));
    });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

// Blocking form of a call with results: waits for `start`'s outcome and
// hands the results to the caller (who frees them with PMIX_INFO_FREE).
pmix_status_t wait_results(
    const std::function<pmix_status_t(std::function<void(pmix_status_t, InfoArray)>)> &start,
    pmix_info_t **results, size_t *nresults) {
    if (results != nullptr) *results = nullptr;
    if (nresults != nullptr) *nresults = 0;
    struct Outcome {
        pmix_status_t status = PMIX_ERR_TIMEOUT;
        std::shared_ptr<InfoArray> results;
    };
    auto done = std::make_shared<Completion<Outcome>>();
    const pmix_status_t rc = start([done](pmix_status_t s, InfoArray r) {
        done->complete(Outcome{s, std::make_shared<InfoArray>(std::move(r))});
    });
    if (rc != PMIX_SUCCESS) return rc;
    done->wait();
    Outcome out = done->value();
    if (out.results && results != nullptr && nresults != nullptr && !out.results->empty()) {
        *nresults = out.results->size();
        *results = out.results->release();
    }
    return out.status;
}

// The _nb forms' pmix_info_cbfunc_t with the results (released by release_held).
std::function<void(pmix_status_t, InfoArray)> info_callback(pmix_info_cbfunc_t cbfunc,
                                                            void *cbdata) {
    return [cbfunc, cbdata](pmix_status_t s, InfoArray r) {
        if (cbfunc == nullptr) return;
        auto *held = new Held{std::move(r)};
        cbfunc(s, held->results.data(), held->results.size(), cbdata, release_held, held);
    };
}

pmix_status_t wait_status(
    const std::function<pmix_status_t(std::function<void(pmix_status_t)>)> &start) {
    auto done = std::make_shared<Completion<pmix_status_t>>();
    const pmix_status_t rc = start([done](pmix_status_t s) { done->complete(s); });
    if (rc != PMIX_SUCCESS) return rc;
    done->wait();
    return done->value();
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Group_construct(const char grp[], const pmix_proc_t procs[],
                                               size_t nprocs, const pmix_info_t directives[],
                                               size_t ndirs, pmix_info_t **results,
                                               size_t *nresults) {
    return wait_results(
        [&](auto done) {
            return start_members(pmixpp::client::group_construct_async, grp, procs, nprocs,
                                 directives, ndirs, done);
        },
        results, nresults);
}

PMIX_EXPORT pmix_status_t PMIx_Group_construct_nb(const char grp[], const pmix_proc_t procs[],
                                                  size_t nprocs, const pmix_info_t info[],
                                                  size_t ninfo, pmix_info_cbfunc_t cbfunc,
                                                  void *cbdata) {
    return start_members(pmixpp::client::group_construct_async, grp, procs, nprocs, info, ninfo,
                         info_callback(cbfunc, cbdata));
}

PMIX_EXPORT pmix_status_t PMIx_Group_destruct(const char grp[], const pmix_info_t info[],
                                              size_t ninfo) {
    return wait_status([&](auto done) { return start_destruct(grp, info, ninfo, done); });
}

PMIX_EXPORT pmix_status_t PMIx_Group_destruct_nb(const char grp[], const pmix_info_t info[],
                                                 size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                                 void *cbdata) {
    return start_destruct(grp, info, ninfo, [cbfunc, cbdata](pmix_status_t s) {
        if (cbfunc != nullptr) cbfunc(s, cbdata);
    });
}

PMIX_EXPORT pmix_status_t PMIx_Group_leave(const char grp[], const pmix_info_t info[],
                                           size_t ninfo) {
    return wait_status([&](auto done) { return start_leave(grp, info, ninfo, done); });
}

PMIX_EXPORT pmix_status_t PMIx_Group_leave_nb(const char grp[], const pmix_info_t info[],
                                              size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return start_leave(grp, info, ninfo, [cbfunc, cbdata](pmix_status_t s) {
        if (cbfunc != nullptr) cbfunc(s, cbdata);
    });
}

PMIX_EXPORT pmix_status_t PMIx_Group_invite(const char grp[], const pmix_proc_t procs[],
                                            size_t nprocs, const pmix_info_t info[], size_t ninfo,
                                            pmix_info_t **results, size_t *nresult) {
    return wait_results(
        [&](auto done) {
            return start_members(pmixpp::client::group_invite_async, grp, procs, nprocs, info,
                                 ninfo, done);
        },
        results, nresult);
}

PMIX_EXPORT pmix_status_t PMIx_Group_invite_nb(const char grp[], const pmix_proc_t procs[],
                                               size_t nprocs, const pmix_info_t info[],
                                               size_t ninfo, pmix_info_cbfunc_t cbfunc,
                                               void *cbdata) {
    return start_members(pmixpp::client::group_invite_async, grp, procs, nprocs, info, ninfo,
                         info_callback(cbfunc, cbdata));
}

PMIX_EXPORT pmix_status_t PMIx_Group_join(const char grp[], const pmix_proc_t *leader,
                                          pmix_group_opt_t opt, const pmix_info_t info[],
                                          size_t ninfo, pmix_info_t **results, size_t *nresult) {
    return wait_results([&](auto done) { return start_join(grp, leader, opt, info, ninfo, done); },
                        results, nresult);
}

PMIX_EXPORT pmix_status_t PMIx_Group_join_nb(const char grp[], const pmix_proc_t *leader,
                                             pmix_group_opt_t opt, const pmix_info_t info[],
                                             size_t ninfo, pmix_info_cbfunc_t cbfunc,
                                             void *cbdata) {
    return start_join(grp, leader, opt, info, ninfo, info_callback(cbfunc, cbdata));
}

}  // extern "C"
