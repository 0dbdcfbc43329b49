#include "job_control.hpp"

#include "job_services.hpp"

#include <pmix.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
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
//   pause:      the processes it still holds stopped
//   checkpoint: the processes still to report PMIX_JCTRL_CHECKPOINT_COMPLETE,
//               and the requestor's callback, called when none is left
//   method:     the checkpoint methods the requestor declared for itself
//   preemptible: the requestor declared itself preemptible
enum class Kind { pause, checkpoint, method, preemptible };

using Clock = std::chrono::steady_clock;

struct Method {
    int sig = 0;                                 // a signal, or
    pmix_status_t code = PMIX_JCTRL_CHECKPOINT;  // an event (sig == 0)
};

struct Tracked {
    std::uint64_t serial = 0;
    Key requestor;
    std::string id;  // PMIX_JOB_CTRL_ID; empty: none given
    Kind kind = Kind::pause;
    std::map<Key, pid_t> procs;
    std::vector<Method> methods;
    std::string checkpoint;  // the checkpoint's name (PMIX_JOB_CTRL_CHECKPOINT)
    pmix_info_cbfunc_t cbfunc = nullptr;
    void *cbdata = nullptr;
    Clock::time_point deadline = Clock::time_point::max();
};

// A checkpoint request's answer, made outside g_mutex.
struct Finished {
    pmix_info_cbfunc_t cbfunc;
    void *cbdata;
    pmix_status_t status;
    std::string reason, checkpoint;
};

std::mutex g_mutex;
std::list<Tracked> g_tracked;
std::uint64_t g_next_serial = 1;

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
            const std::string &reason, const std::string &checkpoint = "") {
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
        if (status != PMIX_SUCCESS)
            std::fprintf(stderr, "pmixrun: job control: %s: %s\n", PMIx_Error_string(status),
                         reason.c_str());
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
pmix_status_t parse_methods(const pmix_value_t &v, std::vector<Method> &out, std::string &reason) {
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

// Under g_mutex: what cancelling `t` undoes. A pause: the processes it still
// holds are continued. A checkpoint: its requestor hears PMIX_ERR_JOB_CANCELED
// (the processes already asked to checkpoint may still do so). A method:
// nothing more (it is forgotten).
void undo(Tracked &t, std::vector<Finished> &finished) {
    if (t.kind == Kind::pause) {
        for (const auto &[key, pid] : t.procs) kill(pid, SIGCONT);
    } else if (t.kind == Kind::checkpoint) {
        finished.push_back({t.cbfunc, t.cbdata, PMIX_ERR_JOB_CANCELED,
                            "checkpoint request cancelled by its requestor", t.checkpoint});
    }
}

void finish(std::vector<Finished> &finished) {
    for (auto &f : finished) answer(f.cbfunc, f.cbdata, f.status, f.reason, f.checkpoint);
    finished.clear();
}

// The event that asks `target` to checkpoint (its registered method).
struct Notified {
    std::vector<pmix_info_t> info;
    ~Notified() {
        for (auto &i : info) PMIx_Value_destruct(&i.value);
    }
    void add(const char *key, const void *v, pmix_data_type_t t) {
        info.emplace_back();
        std::memset(&info.back(), 0, sizeof(pmix_info_t));
        PMIx_Info_load(&info.back(), key, v, t);
    }
};

void release_notified(pmix_status_t, void *cbdata) {
    delete static_cast<Notified *>(cbdata);
}

pmix_status_t raise_checkpoint(const pmix_proc_t &target, pmix_status_t code,
                               const std::string &name, const std::string &id) {
    auto *n = new Notified;
    n->add(PMIX_EVENT_CUSTOM_RANGE, &target, PMIX_PROC);
    n->add(PMIX_EVENT_AFFECTED_PROC, &target, PMIX_PROC);
    if (!name.empty()) n->add(PMIX_JOB_CTRL_CHECKPOINT, name.c_str(), PMIX_STRING);
    if (!id.empty()) n->add(PMIX_JOB_CTRL_ID, id.c_str(), PMIX_STRING);
    pmix_status_t rc = PMIx_Notify_event(code, nullptr, PMIX_RANGE_CUSTOM, n->info.data(),
                                         n->info.size(), release_notified, n);
    if (rc != PMIX_SUCCESS) delete n;
    return rc;
}

// Under g_mutex: whether `requestor` has an outstanding request named `id`.
bool id_taken(const Key &requestor, const std::string &id) {
    return std::any_of(g_tracked.begin(), g_tracked.end(),
                       [&](const Tracked &t) { return t.requestor == requestor && t.id == id; });
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
        std::vector<Finished> finished;
        std::unique_lock lock(g_mutex);
        std::size_t n = 0;
        for (auto it = g_tracked.begin(); it != g_tracked.end();) {
            if (it->requestor == me && (req.cancel_all || it->id == req.cancel_id)) {
                undo(*it, finished);
                it = g_tracked.erase(it);
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

    if (req.declare_methods || req.declare_preemptible) {
        std::unique_lock lock(g_mutex);
        // The declarations this one replaces do not hold their id against it.
        const bool taken = !req.id.empty() &&
                           std::any_of(g_tracked.begin(), g_tracked.end(), [&](const Tracked &t) {
                               const bool replaced =
                                   (req.declare_methods && t.kind == Kind::method) ||
                                   (req.declare_preemptible && t.kind == Kind::preemptible);
                               return t.requestor == me && t.id == req.id && !replaced;
                           });
        if (taken) {
            lock.unlock();
            answer(
                cbfunc, cbdata, PMIX_ERR_EXISTS,
                "an outstanding request of " + name_of(*requestor) + " already has id " + req.id);
            return PMIX_SUCCESS;
        }
        // A new declaration replaces the requestor's earlier one of that
        // kind; PMIX_JOB_CTRL_PREEMPTIBLE false withdraws it.
        auto declare = [&](Kind kind, bool keep) {
            g_tracked.remove_if(
                [&](const Tracked &t) { return t.kind == kind && t.requestor == me; });
            if (!keep) return;
            Tracked t;
            t.serial = g_next_serial++;
            t.requestor = me;
            t.id = req.id;
            t.kind = kind;
            t.methods = req.methods;
            g_tracked.push_back(std::move(t));
        };
        if (req.declare_methods) declare(Kind::method, true);
        if (req.declare_preemptible) declare(Kind::preemptible, req.preemptible);
        lock.unlock();
        answer(cbfunc, cbdata, PMIX_SUCCESS, "");
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
        if (id_taken(me, req.id)) {
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
            t.serial = g_next_serial++;
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
        case Request::Action::checkpoint: {
            // Every target must have declared a method; the first one
            // declared is used.
            std::vector<std::pair<RunningProc, Method>> how;
            for (const auto &rp : procs) {
                auto m = std::find_if(g_tracked.rbegin(), g_tracked.rend(), [&](const Tracked &t) {
                    return t.kind == Kind::method && t.requestor == key_of(rp.proc);
                });
                if (m == g_tracked.rend()) {
                    lock.unlock();
                    answer(cbfunc, cbdata, PMIX_ERR_PROC_CHECKPOINT,
                           name_of(rp.proc) +
                               " declared no checkpoint method (PMIX_JOB_CTRL_CHECKPOINT_METHOD)");
                    return PMIX_SUCCESS;
                }
                how.emplace_back(rp, m->methods.front());
            }
            Tracked t;
            t.serial = g_next_serial++;
            t.requestor = me;
            t.id = req.id;
            t.kind = Kind::checkpoint;
            for (const auto &rp : procs) t.procs[key_of(rp.proc)] = rp.pid;
            t.checkpoint = req.checkpoint;
            t.cbfunc = cbfunc;
            t.cbdata = cbdata;
            if (req.checkpoint_sig_key > 0)
                t.deadline = Clock::now() + std::chrono::seconds(req.checkpoint_sig_key);
            const std::uint64_t serial = t.serial;
            g_tracked.push_back(std::move(t));
            lock.unlock();
            std::fprintf(stderr, "pmixrun: %s asks %zu process(es) to checkpoint%s%s\n",
                         name_of(*requestor).c_str(), procs.size(),
                         req.checkpoint.empty() ? "" : " as ", req.checkpoint.c_str());
            for (const auto &[rp, m] : how) {
                pmix_status_t trc = PMIX_SUCCESS;
                if (m.sig != 0) {
                    if (kill(rp.pid, m.sig) != 0) trc = PMIX_ERR_PROC_CHECKPOINT;
                } else {
                    trc = raise_checkpoint(rp.proc, m.code, req.checkpoint, req.id);
                }
                if (trc != PMIX_SUCCESS) {
                    // Could not even ask: the request fails now.
                    std::vector<Finished> finished;
                    {
                        std::lock_guard again(g_mutex);
                        for (auto it = g_tracked.begin(); it != g_tracked.end(); ++it) {
                            if (it->serial != serial) continue;
                            finished.push_back({it->cbfunc, it->cbdata, trc,
                                                "cannot ask " + name_of(rp.proc) + " to checkpoint",
                                                it->checkpoint});
                            g_tracked.erase(it);
                            break;
                        }
                    }
                    finish(finished);
                    break;
                }
            }
            return PMIX_SUCCESS;  // answered when every target completed
        }
        default:
            break;
    }
    lock.unlock();
    answer(cbfunc, cbdata, PMIX_SUCCESS, "");
    return PMIX_SUCCESS;
}

namespace {

// Under g_mutex: `proc` is done with the checkpoint of `t`; the request
// finishes when no process is left.
void checkpoint_done_by(std::list<Tracked>::iterator t, const Key &proc, pmix_status_t status,
                        const std::string &reason, std::vector<Finished> &finished) {
    t->procs.erase(proc);
    if (status != PMIX_SUCCESS) {
        finished.push_back({t->cbfunc, t->cbdata, status, reason, t->checkpoint});
        g_tracked.erase(t);
    } else if (t->procs.empty()) {
        finished.push_back({t->cbfunc, t->cbdata, PMIX_SUCCESS, "", t->checkpoint});
        g_tracked.erase(t);
    }
}

// PMIX_JCTRL_CHECKPOINT_COMPLETE from a process (range RM, LOCAL, SESSION,
// GLOBAL or UNDEF reaches pmixrun's own handlers): completes its part of the
// oldest checkpoint waiting for it, or of the one its PMIX_JOB_CTRL_CHECKPOINT
// names.
void on_checkpoint_complete(size_t, pmix_status_t, const pmix_proc_t *source, pmix_info_t info[],
                            size_t ninfo, pmix_info_t[], size_t,
                            pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    std::string name;
    for (size_t i = 0; info != nullptr && i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_JOB_CTRL_CHECKPOINT) &&
            info[i].value.type == PMIX_STRING && info[i].value.data.string != nullptr)
            name = info[i].value.data.string;
    }
    std::vector<Finished> finished;
    bool matched = false;
    if (source != nullptr) {
        const Key from = key_of(*source);
        std::lock_guard lock(g_mutex);
        for (auto it = g_tracked.begin(); it != g_tracked.end(); ++it) {
            if (it->kind != Kind::checkpoint || it->procs.count(from) == 0) continue;
            if (!name.empty() && it->checkpoint != name) continue;
            checkpoint_done_by(it, from, PMIX_SUCCESS, "", finished);
            matched = true;
            break;
        }
    }
    if (!matched) {
        std::fprintf(stderr, "pmixrun: checkpoint completion from %s matches no request\n",
                     source != nullptr ? name_of(*source).c_str() : "(unknown)");
    }
    finish(finished);
    if (cbfunc != nullptr) cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
}

std::atomic<bool> g_preempt_requested{false};

void on_preempt_signal(int) {
    g_preempt_requested = true;
}

// PMIX_JCTRL_PREEMPT_ALERT to every process that declared itself preemptible,
// each to it alone.
void raise_preempt_alerts() {
    std::vector<std::pair<Key, std::string>> to;
    {
        std::lock_guard lock(g_mutex);
        for (const auto &t : g_tracked) {
            if (t.kind == Kind::preemptible) to.emplace_back(t.requestor, t.id);
        }
    }
    std::fprintf(stderr, "pmixrun: preemption alert to %zu preemptible process(es)\n", to.size());
    for (const auto &[key, id] : to) {
        pmix_proc_t p{};
        std::memcpy(p.nspace, key.first.data(),
                    std::min<std::size_t>(key.first.size(), PMIX_MAX_NSLEN));
        p.rank = key.second;
        auto *n = new Notified;
        n->add(PMIX_EVENT_CUSTOM_RANGE, &p, PMIX_PROC);
        n->add(PMIX_EVENT_AFFECTED_PROC, &p, PMIX_PROC);
        n->add(PMIX_EVENT_TEXT_MESSAGE, "pmixrun was asked to preempt the job (SIGUSR1)",
               PMIX_STRING);
        if (!id.empty()) n->add(PMIX_JOB_CTRL_ID, id.c_str(), PMIX_STRING);
        pmix_status_t rc = PMIx_Notify_event(PMIX_JCTRL_PREEMPT_ALERT, nullptr, PMIX_RANGE_CUSTOM,
                                             n->info.data(), n->info.size(), release_notified, n);
        if (rc != PMIX_SUCCESS) {
            std::fprintf(stderr, "pmixrun: cannot alert %s: %s\n", name_of(p).c_str(),
                         PMIx_Error_string(rc));
            delete n;
        }
    }
}

}  // namespace

void job_control_start() {
    struct sigaction sa {};
    sa.sa_handler = on_preempt_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, nullptr);
    pmix_status_t code = PMIX_JCTRL_CHECKPOINT_COMPLETE;
    pmix_status_t rc =
        PMIx_Register_event_handler(&code, 1, nullptr, 0, on_checkpoint_complete, nullptr, nullptr);
    if (rc < 0) {
        std::fprintf(stderr, "pmixrun: cannot register for checkpoint completions: %s\n",
                     PMIx_Error_string(rc));
    }
}

void job_control_tick() {
    if (g_preempt_requested.exchange(false)) raise_preempt_alerts();
    std::vector<Finished> finished;
    {
        std::lock_guard lock(g_mutex);
        const auto now = Clock::now();
        for (auto it = g_tracked.begin(); it != g_tracked.end();) {
            if (it->kind == Kind::checkpoint && now >= it->deadline) {
                finished.push_back({it->cbfunc, it->cbdata, PMIX_ERR_TIMEOUT,
                                    std::to_string(it->procs.size()) +
                                        " process(es) did not complete the checkpoint in time",
                                    it->checkpoint});
                it = g_tracked.erase(it);
            } else {
                ++it;
            }
        }
    }
    finish(finished);
}

void job_control_proc_ended(const pmix_proc_t &proc) {
    const Key k = key_of(proc);
    std::vector<Finished> finished;
    {
        std::lock_guard lock(g_mutex);
        forget_paused({RunningProc{proc, 0}});
        g_tracked.remove_if([&](const Tracked &t) {
            return (t.kind == Kind::method || t.kind == Kind::preemptible) && t.requestor == k;
        });
        for (auto it = g_tracked.begin(); it != g_tracked.end();) {
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

}  // namespace pmixrun
