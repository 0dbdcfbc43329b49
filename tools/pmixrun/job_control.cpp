#include "job_control.hpp"

#include "job_services.hpp"

#include <pmix.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace pmixrun {
namespace {

using Key = std::pair<std::string, pmix_rank_t>;

Key key_of(const pmix_proc_t &p) {
    return {std::string(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN)), p.rank};
}

// A request that has something left to undo or to wait for, so that
// PMIX_JOB_CTRL_CANCEL can reach it. Requests done at once (SIGNAL, KILL,
// TERMINATE, RESUME) are not kept.
enum class Kind { pause };

struct Tracked {
    Key requestor;
    std::string id;  // PMIX_JOB_CTRL_ID; empty: none given
    Kind kind = Kind::pause;
    std::map<Key, pid_t> procs;  // pause: the processes it still holds stopped
};

std::mutex g_mutex;
std::list<Tracked> g_tracked;

bool flag(const pmix_info_t &i) {
    return i.value.type == PMIX_UNDEF || (i.value.type == PMIX_BOOL && i.value.data.flag);
}

// The answer of one request: status and a reason for a refusal.
struct Answer {
    std::vector<pmix_info_t> info;
    ~Answer() {
        for (auto &i : info) PMIx_Value_destruct(&i.value);
    }
};

void release_answer(void *cbdata) {
    delete static_cast<Answer *>(cbdata);
}

void answer(pmix_info_cbfunc_t cbfunc, void *cbdata, pmix_status_t status,
            const std::string &reason) {
    if (cbfunc == nullptr) return;
    auto *a = new Answer;
    if (!reason.empty()) {
        a->info.emplace_back();
        std::memset(&a->info.back(), 0, sizeof(pmix_info_t));
        PMIx_Info_load(&a->info.back(), PMIX_EVENT_TEXT_MESSAGE, reason.c_str(), PMIX_STRING);
        if (status != PMIX_SUCCESS)
            std::fprintf(stderr, "pmixrun: job control refused: %s\n", reason.c_str());
    }
    cbfunc(status, a->info.empty() ? nullptr : a->info.data(), a->info.size(), cbdata,
           release_answer, a);
}

std::string name_of(const pmix_proc_t &p) {
    std::string ns(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN));
    return p.rank == PMIX_RANK_WILDCARD ? ns + ":*" : ns + ":" + std::to_string(p.rank);
}

// A parsed request.
struct Request {
    enum class Action { none, pause, resume, signal, cancel } action = Action::none;
    int sig = 0;             // signal
    std::string id;          // PMIX_JOB_CTRL_ID
    bool cancel_all = true;  // cancel: no id given
    std::string cancel_id;
};

// Fills `req` or says why not (status + reason).
pmix_status_t parse(const pmix_info_t directives[], size_t ndirs, Request &req,
                    std::string &reason) {
    int actions = 0;
    auto set_action = [&](Request::Action a, const char *key) {
        ++actions;
        if (actions > 1) {
            reason = std::string("more than one action in one request (") + key + ")";
            return false;
        }
        req.action = a;
        return true;
    };
    for (size_t i = 0; directives != nullptr && i < ndirs; ++i) {
        const pmix_info_t &d = directives[i];
        if (PMIX_CHECK_KEY(&d, PMIX_USERID) || PMIX_CHECK_KEY(&d, PMIX_GRPID) ||
            PMIX_CHECK_KEY(&d, PMIX_TIMEOUT)) {
            continue;
        } else if (PMIX_CHECK_KEY(&d, PMIX_JOB_CTRL_ID)) {
            if (d.value.type != PMIX_STRING || d.value.data.string == nullptr ||
                *d.value.data.string == '\0') {
                reason = "PMIX_JOB_CTRL_ID needs a non-empty string";
                return PMIX_ERR_BAD_PARAM;
            }
            req.id = d.value.data.string;
        } else if (PMIX_CHECK_KEY(&d, PMIX_JOB_CTRL_PAUSE)) {
            if (flag(d) && !set_action(Request::Action::pause, d.key)) return PMIX_ERR_BAD_PARAM;
        } else if (PMIX_CHECK_KEY(&d, PMIX_JOB_CTRL_RESUME)) {
            if (flag(d) && !set_action(Request::Action::resume, d.key)) return PMIX_ERR_BAD_PARAM;
        } else if (PMIX_CHECK_KEY(&d, PMIX_JOB_CTRL_KILL)) {
            if (flag(d)) {
                if (!set_action(Request::Action::signal, d.key)) return PMIX_ERR_BAD_PARAM;
                req.sig = SIGKILL;
            }
        } else if (PMIX_CHECK_KEY(&d, PMIX_JOB_CTRL_TERMINATE)) {
            if (flag(d)) {
                if (!set_action(Request::Action::signal, d.key)) return PMIX_ERR_BAD_PARAM;
                req.sig = SIGTERM;
            }
        } else if (PMIX_CHECK_KEY(&d, PMIX_JOB_CTRL_SIGNAL)) {
            if (d.value.type != PMIX_INT || d.value.data.integer <= 0 ||
                d.value.data.integer >= NSIG) {
                reason = "PMIX_JOB_CTRL_SIGNAL needs an int signal number from 1 to " +
                         std::to_string(NSIG - 1);
                return PMIX_ERR_BAD_PARAM;
            }
            if (!set_action(Request::Action::signal, d.key)) return PMIX_ERR_BAD_PARAM;
            req.sig = d.value.data.integer;
        } else if (PMIX_CHECK_KEY(&d, PMIX_JOB_CTRL_CANCEL)) {
            if (!set_action(Request::Action::cancel, d.key)) return PMIX_ERR_BAD_PARAM;
            if (d.value.type == PMIX_STRING && d.value.data.string != nullptr &&
                *d.value.data.string != '\0') {
                req.cancel_all = false;
                req.cancel_id = d.value.data.string;
            } else if (d.value.type != PMIX_STRING && d.value.type != PMIX_UNDEF) {
                reason = "PMIX_JOB_CTRL_CANCEL needs a string request id (NULL: all)";
                return PMIX_ERR_BAD_PARAM;
            }
        } else if (PMIX_CHECK_KEY(&d, PMIX_JOB_CTRL_PROVISION) ||
                   PMIX_CHECK_KEY(&d, PMIX_JOB_CTRL_PROVISION_IMAGE)) {
            reason = "pmixrun runs jobs on this node only and cannot provision nodes";
            return PMIX_ERR_NOT_SUPPORTED;
        } else if (PMIX_CHECK_KEY(&d, PMIX_JOB_CTRL_RESTART)) {
            reason = "pmixrun cannot restart processes from a checkpoint";
            return PMIX_ERR_NOT_SUPPORTED;
        } else {
            reason = std::string("pmixrun does not support the job control directive ") + d.key;
            return PMIX_ERR_NOT_SUPPORTED;
        }
    }
    if (actions == 0) {
        reason = "no job control action or declaration in the request";
        return PMIX_ERR_BAD_PARAM;
    }
    return PMIX_SUCCESS;
}

// The running processes the targets name, each once; every target must name
// at least one.
pmix_status_t resolve(const pmix_proc_t targets[], size_t ntargets, std::vector<RunningProc> &out,
                      std::string &reason) {
    std::set<Key> seen;
    for (size_t t = 0; targets != nullptr && t < ntargets; ++t) {
        auto found = job_services_find(targets[t]);
        if (found.empty()) {
            reason = "no running process " + name_of(targets[t]);
            return PMIX_ERR_NOT_FOUND;
        }
        for (const auto &rp : found) {
            if (seen.insert(key_of(rp.proc)).second) out.push_back(rp);
        }
    }
    if (out.empty()) {
        reason = "no target process";
        return PMIX_ERR_NOT_FOUND;
    }
    return PMIX_SUCCESS;
}

// Under g_mutex: the processes still paused by `t` are continued.
void undo(Tracked &t) {
    if (t.kind == Kind::pause) {
        for (const auto &[key, pid] : t.procs) kill(pid, SIGCONT);
    }
}

// Under g_mutex: no pause holds `procs` any more; a pause left holding
// nothing is done.
void forget_paused(const std::vector<RunningProc> &procs) {
    for (auto it = g_tracked.begin(); it != g_tracked.end();) {
        if (it->kind != Kind::pause) {
            ++it;
            continue;
        }
        for (const auto &rp : procs) it->procs.erase(key_of(rp.proc));
        it = it->procs.empty() ? g_tracked.erase(it) : std::next(it);
    }
}

}  // namespace

pmix_status_t job_control_upcall(const pmix_proc_t *requestor, const pmix_proc_t targets[],
                                 size_t ntargets, const pmix_info_t directives[], size_t ndirs,
                                 pmix_info_cbfunc_t cbfunc, void *cbdata) {
    if (requestor == nullptr) return PMIX_ERR_BAD_PARAM;
    Request req;
    std::string reason;
    pmix_status_t rc = parse(directives, ndirs, req, reason);
    if (rc != PMIX_SUCCESS) {
        answer(cbfunc, cbdata, rc, reason);
        return PMIX_SUCCESS;
    }
    const Key me = key_of(*requestor);

    if (req.action == Request::Action::cancel) {
        std::lock_guard lock(g_mutex);
        std::size_t n = 0;
        for (auto it = g_tracked.begin(); it != g_tracked.end();) {
            if (it->requestor == me && (req.cancel_all || it->id == req.cancel_id)) {
                undo(*it);
                it = g_tracked.erase(it);
                ++n;
            } else {
                ++it;
            }
        }
        if (n == 0 && !req.cancel_all) {
            answer(cbfunc, cbdata, PMIX_ERR_NOT_FOUND,
                   "no outstanding job control request with id " + req.cancel_id);
            return PMIX_SUCCESS;
        }
        answer(cbfunc, cbdata, PMIX_SUCCESS, "cancelled " + std::to_string(n) + " request(s)");
        return PMIX_SUCCESS;
    }

    std::vector<RunningProc> procs;
    rc = resolve(targets, ntargets, procs, reason);
    if (rc != PMIX_SUCCESS) {
        answer(cbfunc, cbdata, rc, reason);
        return PMIX_SUCCESS;
    }
    std::unique_lock lock(g_mutex);
    if (!req.id.empty()) {
        const bool taken = std::any_of(g_tracked.begin(), g_tracked.end(), [&](const Tracked &t) {
            return t.requestor == me && t.id == req.id;
        });
        if (taken) {
            lock.unlock();
            answer(
                cbfunc, cbdata, PMIX_ERR_EXISTS,
                "an outstanding request of " + name_of(*requestor) + " already has id " + req.id);
            return PMIX_SUCCESS;
        }
    }
    switch (req.action) {
        case Request::Action::pause: {
            Tracked t;
            t.requestor = me;
            t.id = req.id;
            t.kind = Kind::pause;
            for (const auto &rp : procs) t.procs[key_of(rp.proc)] = rp.pid;
            g_tracked.push_back(std::move(t));
            std::fprintf(stderr, "pmixrun: %s pauses %zu process(es)\n",
                         name_of(*requestor).c_str(), procs.size());
            for (const auto &rp : procs) kill(rp.pid, SIGSTOP);
            break;
        }
        case Request::Action::resume: {
            forget_paused(procs);  // whoever paused them
            std::fprintf(stderr, "pmixrun: %s resumes %zu process(es)\n",
                         name_of(*requestor).c_str(), procs.size());
            for (const auto &rp : procs) kill(rp.pid, SIGCONT);
            break;
        }
        case Request::Action::signal: {
            std::fprintf(stderr, "pmixrun: %s sends signal %d to %zu process(es)\n",
                         name_of(*requestor).c_str(), req.sig, procs.size());
            for (const auto &rp : procs) kill(rp.pid, req.sig);
            if (req.sig == SIGTERM) {
                // A paused process could not act on a polite termination:
                // it is continued and no pause holds it any more.
                forget_paused(procs);
                for (const auto &rp : procs) kill(rp.pid, SIGCONT);
            }
            break;
        }
        default:
            break;
    }
    lock.unlock();
    answer(cbfunc, cbdata, PMIX_SUCCESS, "");
    return PMIX_SUCCESS;
}

void job_control_proc_ended(const pmix_proc_t &proc) {
    std::lock_guard lock(g_mutex);
    forget_paused({RunningProc{proc, 0}});
}

}  // namespace pmixrun
