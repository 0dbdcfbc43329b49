// pmixrun's job-control logic (job_controller.hpp, docs/job_control.md).
#include "job_controller.hpp"

#include <pmix.h>
#include <signal.h>

#include <algorithm>
#include <cstring>
#include <set>

namespace pmixrun {
namespace {

using Key = JobController::Key;

Key key_of(const pmix_proc_t &p) {
    return {std::string(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN)), p.rank};
}

bool flag(const pmix_info_t &i) {
    return i.value.type == PMIX_UNDEF || (i.value.type == PMIX_BOOL && i.value.data.flag);
}

std::string name_of(const pmix_proc_t &p) {
    std::string ns(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN));
    return p.rank == PMIX_RANK_WILDCARD ? ns + ":*" : ns + ":" + std::to_string(p.rank);
}

std::string name_of(const Key &k) {
    return k.second == PMIX_RANK_WILDCARD ? k.first + ":*"
                                          : k.first + ":" + std::to_string(k.second);
}

pmix_proc_t proc_of(const Key &k) {
    pmix_proc_t p{};
    std::memcpy(p.nspace, k.first.data(), std::min<std::size_t>(k.first.size(), PMIX_MAX_NSLEN));
    p.rank = k.second;
    return p;
}

// The answer of one request: its results (a reason for a refusal).
struct Answer {
    std::vector<pmix_info_t> info;
    ~Answer() {
        for (auto &i : info) PMIx_Value_destruct(&i.value);
    }
};

void release_answer(void *cbdata) {
    delete static_cast<Answer *>(cbdata);
}

}  // namespace

// A parsed request.
struct JobController::Request {
    enum class Action { none, pause, resume, signal, cancel, checkpoint } action = Action::none;
    int sig = 0;                 // signal
    std::string checkpoint;      // checkpoint: its name
    int checkpoint_sig_key = 0;  // "pmix.jctrl.ckptsig" given: the checkpoint's timeout
    bool declare_methods = false;
    bool declare_preemptible = false;
    bool preemptible = false;
    std::vector<Method> methods;
    std::string id;          // PMIX_JOB_CTRL_ID
    bool cancel_all = true;  // cancel: no id given
    std::string cancel_id;
};

// A PMIX_JOB_CTRL_CHECKPOINT_METHOD array: the methods pmixrun supports, in
// the order given (the first is used). Methods it does not know are skipped.
pmix_status_t JobController::parse_methods(const pmix_value_t &v, std::vector<Method> &out,
                                           std::string &reason) {
    if (v.type != PMIX_DATA_ARRAY || v.data.darray == nullptr || v.data.darray->type != PMIX_INFO ||
        v.data.darray->size == 0 || v.data.darray->array == nullptr) {
        reason = "PMIX_JOB_CTRL_CHECKPOINT_METHOD needs a non-empty data array of pmix_info_t";
        return PMIX_ERR_BAD_PARAM;
    }
    const auto *m = static_cast<const pmix_info_t *>(v.data.darray->array);
    for (size_t i = 0; i < v.data.darray->size; ++i) {
        if (PMIX_CHECK_KEY(&m[i], PMIX_JOB_CTRL_CHECKPOINT_SIGNAL)) {
            const int sig = m[i].value.type == PMIX_INT ? m[i].value.data.integer : 0;
            if (sig <= 0 || sig >= NSIG || sig == SIGKILL || sig == SIGSTOP) {
                reason = "PMIX_JOB_CTRL_CHECKPOINT_SIGNAL needs an int signal a process can catch";
                return PMIX_ERR_BAD_PARAM;
            }
            out.push_back({sig, PMIX_SUCCESS});
        } else if (PMIX_CHECK_KEY(&m[i], PMIX_JOB_CTRL_CHECKPOINT_EVENT)) {
            // The standard's bool, or the seed's event code.
            if (m[i].value.type == PMIX_STATUS) {
                out.push_back({0, m[i].value.data.status});
            } else if (m[i].value.type == PMIX_INT) {
                out.push_back({0, m[i].value.data.integer});
            } else if (flag(m[i])) {
                out.push_back({0, PMIX_JCTRL_CHECKPOINT});
            } else if (m[i].value.type != PMIX_BOOL) {
                reason = "PMIX_JOB_CTRL_CHECKPOINT_EVENT needs a bool (or an event code)";
                return PMIX_ERR_BAD_PARAM;
            }
        }
    }
    if (out.empty()) {
        reason =
            "none of the declared checkpoint methods is one pmixrun supports (a signal, "
            "an event)";
        return PMIX_ERR_NOT_SUPPORTED;
    }
    return PMIX_SUCCESS;
}

// Fills `req` or says why not (status + reason).
pmix_status_t JobController::parse(const pmix_info_t directives[], size_t ndirs, Request &req,
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
        } else if (PMIX_CHECK_KEY(&d, PMIX_JOB_CTRL_CHECKPOINT)) {
            if (d.value.type != PMIX_STRING) {
                reason = "PMIX_JOB_CTRL_CHECKPOINT needs a string (the checkpoint's name)";
                return PMIX_ERR_BAD_PARAM;
            }
            if (!set_action(Request::Action::checkpoint, d.key)) return PMIX_ERR_BAD_PARAM;
            if (d.value.data.string != nullptr) req.checkpoint = d.value.data.string;
        } else if (PMIX_CHECK_KEY(&d, PMIX_JOB_CTRL_CHECKPOINT_TIMEOUT)) {
            // The same key as PMIX_JOB_CTRL_CHECKPOINT_SIGNAL (OpenPMIx 4.2's
            // headers): beside PMIX_JOB_CTRL_CHECKPOINT it is the timeout.
            if ((d.value.type != PMIX_INT && d.value.type != PMIX_UINT32) ||
                (d.value.type == PMIX_INT ? d.value.data.integer : (int)d.value.data.uint32) <= 0) {
                reason = "PMIX_JOB_CTRL_CHECKPOINT_TIMEOUT needs a positive int of seconds";
                return PMIX_ERR_BAD_PARAM;
            }
            req.checkpoint_sig_key = d.value.type == PMIX_INT
                                         ? d.value.data.integer
                                         : static_cast<int>(d.value.data.uint32);
        } else if (PMIX_CHECK_KEY(&d, PMIX_JOB_CTRL_CHECKPOINT_EVENT)) {
            reason =
                "PMIX_JOB_CTRL_CHECKPOINT_EVENT belongs in a PMIX_JOB_CTRL_CHECKPOINT_METHOD array";
            return PMIX_ERR_BAD_PARAM;
        } else if (PMIX_CHECK_KEY(&d, PMIX_JOB_CTRL_CHECKPOINT_METHOD)) {
            if (pmix_status_t rc = parse_methods(d.value, req.methods, reason); rc != PMIX_SUCCESS)
                return rc;
            req.declare_methods = true;
        } else if (PMIX_CHECK_KEY(&d, PMIX_JOB_CTRL_PREEMPTIBLE)) {
            if (d.value.type != PMIX_BOOL && d.value.type != PMIX_UNDEF) {
                reason = "PMIX_JOB_CTRL_PREEMPTIBLE needs a bool";
                return PMIX_ERR_BAD_PARAM;
            }
            req.declare_preemptible = true;
            req.preemptible = flag(d);
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
    const bool declares = req.declare_methods || req.declare_preemptible;
    if (actions == 0 && !declares) {
        reason = "no job control action or declaration in the request";
        return PMIX_ERR_BAD_PARAM;
    }
    if (actions > 0 && declares) {
        reason = "a declaration about the requestor and an action in one request";
        return PMIX_ERR_BAD_PARAM;
    }
    if (req.checkpoint_sig_key != 0 && req.action != Request::Action::checkpoint) {
        reason =
            "PMIX_JOB_CTRL_CHECKPOINT_SIGNAL belongs in a PMIX_JOB_CTRL_CHECKPOINT_METHOD array "
            "(beside PMIX_JOB_CTRL_CHECKPOINT the same key is PMIX_JOB_CTRL_CHECKPOINT_TIMEOUT)";
        return PMIX_ERR_BAD_PARAM;
    }
    return PMIX_SUCCESS;
}

// The running processes the targets name, each once; every target must name
// at least one.
pmix_status_t JobController::resolve(const pmix_proc_t targets[], size_t ntargets,
                                     std::vector<RunningProc> &out, std::string &reason) {
    std::set<Key> seen;
    for (size_t t = 0; targets != nullptr && t < ntargets; ++t) {
        auto found = fx_.find(targets[t]);
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

void JobController::answer(pmix_info_cbfunc_t cbfunc, void *cbdata, pmix_status_t status,
                           const std::string &reason, const std::string &checkpoint) {
    if (cbfunc == nullptr) return;
    auto *a = new Answer;
    if (!checkpoint.empty()) {
        a->info.emplace_back();
        std::memset(&a->info.back(), 0, sizeof(pmix_info_t));
        PMIx_Info_load(&a->info.back(), PMIX_JOB_CTRL_CHECKPOINT, checkpoint.c_str(), PMIX_STRING);
    }
    if (!reason.empty()) {
        a->info.emplace_back();
        std::memset(&a->info.back(), 0, sizeof(pmix_info_t));
        PMIx_Info_load(&a->info.back(), PMIX_EVENT_TEXT_MESSAGE, reason.c_str(), PMIX_STRING);
        if (status != PMIX_SUCCESS) {
            fx_.say(std::string("pmixrun: job control: ") + PMIx_Error_string(status) + ": " +
                    reason);
        }
    }
    cbfunc(status, a->info.empty() ? nullptr : a->info.data(), a->info.size(), cbdata,
           release_answer, a);
}

void JobController::finish(std::vector<Finished> &finished) {
    for (auto &f : finished) answer(f.cbfunc, f.cbdata, f.status, f.reason, f.checkpoint);
    finished.clear();
}

// What cancelling `t` undoes. A pause: the processes it still holds are
// continued. A checkpoint: its requestor hears PMIX_ERR_JOB_CANCELED (the
// processes already asked to checkpoint may still do so). A declaration:
// nothing more (it is forgotten).
void JobController::undo(Tracked &t, std::vector<Finished> &finished) {
    if (t.kind == Kind::pause) {
        for (const auto &[key, pid] : t.procs) fx_.signal(pid, SIGCONT);
    } else if (t.kind == Kind::checkpoint) {
        finished.push_back({t.cbfunc, t.cbdata, PMIX_ERR_JOB_CANCELED,
                            "checkpoint request cancelled by its requestor", t.checkpoint});
    }
}

bool JobController::id_taken(const Key &requestor, const std::string &id) const {
    return std::any_of(tracked_.begin(), tracked_.end(),
                       [&](const Tracked &t) { return t.requestor == requestor && t.id == id; });
}

// No pause holds `procs` any more; a pause left holding nothing is done.
void JobController::forget_paused(const std::vector<RunningProc> &procs) {
    for (auto it = tracked_.begin(); it != tracked_.end();) {
        if (it->kind != Kind::pause) {
            ++it;
            continue;
        }
        for (const auto &rp : procs) it->procs.erase(key_of(rp.proc));
        it = it->procs.empty() ? tracked_.erase(it) : std::next(it);
    }
}

pmix_status_t JobController::request(const pmix_proc_t *requestor, const pmix_proc_t targets[],
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
    if (req.action == Request::Action::cancel) return cancel(me, req, cbfunc, cbdata);
    if (req.declare_methods || req.declare_preemptible)
        return declare(*requestor, req, cbfunc, cbdata);

    std::vector<RunningProc> procs;
    rc = resolve(targets, ntargets, procs, reason);
    if (rc != PMIX_SUCCESS) {
        answer(cbfunc, cbdata, rc, reason);
        return PMIX_SUCCESS;
    }
    std::unique_lock lock(mu_);
    if (!req.id.empty() && id_taken(me, req.id)) {
        lock.unlock();
        answer(cbfunc, cbdata, PMIX_ERR_EXISTS,
               "an outstanding request of " + name_of(*requestor) + " already has id " + req.id);
        return PMIX_SUCCESS;
    }
    switch (req.action) {
        case Request::Action::pause: {
            Tracked t;
            t.serial = next_serial_++;
            t.requestor = me;
            t.id = req.id;
            t.kind = Kind::pause;
            for (const auto &rp : procs) t.procs[key_of(rp.proc)] = rp.pid;
            tracked_.push_back(std::move(t));
            fx_.say("pmixrun: " + name_of(*requestor) + " pauses " + std::to_string(procs.size()) +
                    " process(es)");
            for (const auto &rp : procs) fx_.signal(rp.pid, SIGSTOP);
            break;
        }
        case Request::Action::resume: {
            forget_paused(procs);  // whoever paused them
            fx_.say("pmixrun: " + name_of(*requestor) + " resumes " + std::to_string(procs.size()) +
                    " process(es)");
            for (const auto &rp : procs) fx_.signal(rp.pid, SIGCONT);
            break;
        }
        case Request::Action::signal: {
            fx_.say("pmixrun: " + name_of(*requestor) + " sends signal " + std::to_string(req.sig) +
                    " to " + std::to_string(procs.size()) + " process(es)");
            for (const auto &rp : procs) fx_.signal(rp.pid, req.sig);
            if (req.sig == SIGTERM) {
                // A paused process could not act on a polite termination:
                // it is continued and no pause holds it any more.
                forget_paused(procs);
                for (const auto &rp : procs) fx_.signal(rp.pid, SIGCONT);
            }
            break;
        }
        case Request::Action::checkpoint:
            return checkpoint(*requestor, req, procs, lock, cbfunc, cbdata);
        default:
            break;
    }
    lock.unlock();
    answer(cbfunc, cbdata, PMIX_SUCCESS, "");
    return PMIX_SUCCESS;
}

pmix_status_t JobController::cancel(const Key &me, const Request &req, pmix_info_cbfunc_t cbfunc,
                                    void *cbdata) {
    std::vector<Finished> finished;
    std::unique_lock lock(mu_);
    std::size_t n = 0;
    for (auto it = tracked_.begin(); it != tracked_.end();) {
        if (it->requestor == me && (req.cancel_all || it->id == req.cancel_id)) {
            undo(*it, finished);
            it = tracked_.erase(it);
            ++n;
        } else {
            ++it;
        }
    }
    lock.unlock();
    finish(finished);
    if (n == 0 && !req.cancel_all) {
        answer(cbfunc, cbdata, PMIX_ERR_NOT_FOUND,
               "no outstanding job control request with id " + req.cancel_id);
        return PMIX_SUCCESS;
    }
    answer(cbfunc, cbdata, PMIX_SUCCESS, "cancelled " + std::to_string(n) + " request(s)");
    return PMIX_SUCCESS;
}

pmix_status_t JobController::declare(const pmix_proc_t &requestor, const Request &req,
                                     pmix_info_cbfunc_t cbfunc, void *cbdata) {
    const Key me = key_of(requestor);
    std::unique_lock lock(mu_);
    // The declarations this one replaces do not hold their id against it.
    const bool taken =
        !req.id.empty() && std::any_of(tracked_.begin(), tracked_.end(), [&](const Tracked &t) {
            const bool replaced = (req.declare_methods && t.kind == Kind::method) ||
                                  (req.declare_preemptible && t.kind == Kind::preemptible);
            return t.requestor == me && t.id == req.id && !replaced;
        });
    if (taken) {
        lock.unlock();
        answer(cbfunc, cbdata, PMIX_ERR_EXISTS,
               "an outstanding request of " + name_of(requestor) + " already has id " + req.id);
        return PMIX_SUCCESS;
    }
    // A new declaration replaces the requestor's earlier one of that kind;
    // PMIX_JOB_CTRL_PREEMPTIBLE false withdraws it.
    auto record = [&](Kind kind, bool keep) {
        tracked_.remove_if([&](const Tracked &t) { return t.kind == kind && t.requestor == me; });
        if (!keep) return;
        Tracked t;
        t.serial = next_serial_++;
        t.requestor = me;
        t.id = req.id;
        t.kind = kind;
        t.methods = req.methods;
        tracked_.push_back(std::move(t));
    };
    if (req.declare_methods) record(Kind::method, true);
    if (req.declare_preemptible) record(Kind::preemptible, req.preemptible);
    lock.unlock();
    answer(cbfunc, cbdata, PMIX_SUCCESS, "");
    return PMIX_SUCCESS;
}

// Every target must have declared a method; the first one declared is used.
// The request stays open until every target completed.
pmix_status_t JobController::checkpoint(const pmix_proc_t &requestor, const Request &req,
                                        const std::vector<RunningProc> &procs,
                                        std::unique_lock<std::mutex> &lock,
                                        pmix_info_cbfunc_t cbfunc, void *cbdata) {
    std::vector<std::pair<RunningProc, Method>> how;
    for (const auto &rp : procs) {
        auto m = std::find_if(tracked_.rbegin(), tracked_.rend(), [&](const Tracked &t) {
            return t.kind == Kind::method && t.requestor == key_of(rp.proc);
        });
        if (m == tracked_.rend()) {
            lock.unlock();
            answer(cbfunc, cbdata, PMIX_ERR_PROC_CHECKPOINT,
                   name_of(rp.proc) +
                       " declared no checkpoint method (PMIX_JOB_CTRL_CHECKPOINT_METHOD)");
            return PMIX_SUCCESS;
        }
        how.emplace_back(rp, m->methods.front());
    }
    Tracked t;
    t.serial = next_serial_++;
    t.requestor = key_of(requestor);
    t.id = req.id;
    t.kind = Kind::checkpoint;
    for (const auto &rp : procs) t.procs[key_of(rp.proc)] = rp.pid;
    t.checkpoint = req.checkpoint;
    t.cbfunc = cbfunc;
    t.cbdata = cbdata;
    if (req.checkpoint_sig_key > 0)
        t.deadline = fx_.now() + std::chrono::seconds(req.checkpoint_sig_key);
    const std::uint64_t serial = t.serial;
    tracked_.push_back(std::move(t));
    lock.unlock();
    fx_.say("pmixrun: " + name_of(requestor) + " asks " + std::to_string(procs.size()) +
            " process(es) to checkpoint" + (req.checkpoint.empty() ? "" : " as " + req.checkpoint));
    for (const auto &[rp, m] : how) {
        pmix_status_t trc = PMIX_SUCCESS;
        if (m.sig != 0) {
            if (fx_.signal(rp.pid, m.sig) != 0) trc = PMIX_ERR_PROC_CHECKPOINT;
        } else {
            trc = fx_.ask_checkpoint(rp.proc, m.code, req.checkpoint, req.id);
        }
        if (trc == PMIX_SUCCESS) continue;
        // Could not even ask: the request fails now.
        std::vector<Finished> finished;
        {
            std::lock_guard again(mu_);
            for (auto it = tracked_.begin(); it != tracked_.end(); ++it) {
                if (it->serial != serial) continue;
                finished.push_back({it->cbfunc, it->cbdata, trc,
                                    "cannot ask " + name_of(rp.proc) + " to checkpoint",
                                    it->checkpoint});
                tracked_.erase(it);
                break;
            }
        }
        finish(finished);
        break;
    }
    return PMIX_SUCCESS;  // answered when every target completed
}

// `proc` is done with the checkpoint of `t`; the request finishes when no
// process is left (or at once on an error).
void JobController::checkpoint_done_by(std::list<Tracked>::iterator t, const Key &proc,
                                       pmix_status_t status, const std::string &reason,
                                       std::vector<Finished> &finished) {
    t->procs.erase(proc);
    if (status != PMIX_SUCCESS) {
        finished.push_back({t->cbfunc, t->cbdata, status, reason, t->checkpoint});
        tracked_.erase(t);
    } else if (t->procs.empty()) {
        finished.push_back({t->cbfunc, t->cbdata, PMIX_SUCCESS, "", t->checkpoint});
        tracked_.erase(t);
    }
}

bool JobController::checkpoint_complete(const pmix_proc_t &source, const std::string &name) {
    std::vector<Finished> finished;
    bool matched = false;
    const Key from = key_of(source);
    {
        std::lock_guard lock(mu_);
        for (auto it = tracked_.begin(); it != tracked_.end(); ++it) {
            if (it->kind != Kind::checkpoint || it->procs.count(from) == 0) continue;
            if (!name.empty() && it->checkpoint != name) continue;
            checkpoint_done_by(it, from, PMIX_SUCCESS, "", finished);
            matched = true;
            break;
        }
    }
    if (!matched) {
        fx_.say("pmixrun: checkpoint completion from " + name_of(source) + " matches no request");
    }
    finish(finished);
    return matched;
}

std::size_t JobController::preempt() {
    std::vector<std::pair<Key, std::string>> to;
    {
        std::lock_guard lock(mu_);
        for (const auto &t : tracked_) {
            if (t.kind == Kind::preemptible) to.emplace_back(t.requestor, t.id);
        }
    }
    fx_.say("pmixrun: preemption alert to " + std::to_string(to.size()) +
            " preemptible process(es)");
    for (const auto &[key, id] : to) {
        pmix_status_t rc = fx_.alert_preempt(proc_of(key), id);
        if (rc != PMIX_SUCCESS) {
            fx_.say("pmixrun: cannot alert " + name_of(key) + ": " + PMIx_Error_string(rc));
        }
    }
    return to.size();
}

void JobController::tick() {
    std::vector<Finished> finished;
    {
        std::lock_guard lock(mu_);
        const auto now = fx_.now();
        for (auto it = tracked_.begin(); it != tracked_.end();) {
            if (it->kind == Kind::checkpoint && now >= it->deadline) {
                finished.push_back({it->cbfunc, it->cbdata, PMIX_ERR_TIMEOUT,
                                    std::to_string(it->procs.size()) +
                                        " process(es) did not complete the checkpoint in time",
                                    it->checkpoint});
                it = tracked_.erase(it);
            } else {
                ++it;
            }
        }
    }
    finish(finished);
}

JobControlEffects::Clock::time_point JobController::next_deadline() const {
    std::lock_guard lock(mu_);
    auto next = JobControlEffects::Clock::time_point::max();
    for (const auto &t : tracked_) {
        if (t.kind == Kind::checkpoint) next = std::min(next, t.deadline);
    }
    return next;
}

void JobController::proc_ended(const pmix_proc_t &proc) {
    const Key k = key_of(proc);
    std::vector<Finished> finished;
    {
        std::lock_guard lock(mu_);
        forget_paused({RunningProc{proc, 0}});
        tracked_.remove_if([&](const Tracked &t) {
            return (t.kind == Kind::method || t.kind == Kind::preemptible) && t.requestor == k;
        });
        for (auto it = tracked_.begin(); it != tracked_.end();) {
            auto next = std::next(it);
            if (it->kind == Kind::checkpoint && it->procs.count(k) != 0) {
                checkpoint_done_by(it, k, PMIX_ERR_PROC_CHECKPOINT,
                                   name_of(proc) + " ended before completing its checkpoint",
                                   finished);
            }
            it = next;
        }
    }
    finish(finished);
}

std::size_t JobController::outstanding(const pmix_proc_t &requestor) const {
    const Key me = key_of(requestor);
    std::lock_guard lock(mu_);
    return static_cast<std::size_t>(std::count_if(
        tracked_.begin(), tracked_.end(), [&](const Tracked &t) { return t.requestor == me; }));
}

}  // namespace pmixrun
