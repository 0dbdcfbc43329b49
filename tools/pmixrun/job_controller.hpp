// pmixrun's job-control logic without its side effects (docs/job_control.md
// is the user's description; job_control.hpp the upcall that drives it).
//
// JobController parses a request, resolves its targets, keeps the requests
// that can still be cancelled or completed (pauses, checkpoints, checkpoint
// method and preemptible declarations), each under its requestor and
// PMIX_JOB_CTRL_ID, and answers through the request's callback. What it does
// to the world goes through JobControlEffects: pmixrun's real one sends
// signals and PMIx events and reads the process table; a unit test's records
// the calls (tests/unit/pmixrun).
//
// Threads: any thread; one mutex guards the tracked requests. Callbacks and
// effects that notify are made outside it.
#pragma once

#include <pmix_server.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "job_services.hpp"

namespace pmixrun {

class JobControlEffects {
  public:
    using Clock = std::chrono::steady_clock;
    virtual ~JobControlEffects() = default;
    // The running processes `target` names (its rank, or every rank of its
    // namespace for PMIX_RANK_WILDCARD).
    virtual std::vector<RunningProc> find(const pmix_proc_t &target) = 0;
    // kill(2): 0 or -1.
    virtual int signal(pid_t pid, int sig) = 0;
    // The checkpoint event `code` to `target` alone, naming the checkpoint
    // and the request's id.
    virtual pmix_status_t ask_checkpoint(const pmix_proc_t &target, pmix_status_t code,
                                         const std::string &name, const std::string &id) = 0;
    // PMIX_JCTRL_PREEMPT_ALERT to `target` alone (`id`: its declaration's).
    virtual pmix_status_t alert_preempt(const pmix_proc_t &target, const std::string &id) = 0;
    virtual Clock::time_point now() = 0;
    // A line for pmixrun's stderr (no newline).
    virtual void say(const std::string &line) = 0;
};

class JobController {
  public:
    explicit JobController(JobControlEffects &effects) : fx_(effects) {}

    // pmix_server_module_t::job_control: always answers through `cbfunc`
    // (now, or later for a checkpoint) and returns PMIX_SUCCESS, except for
    // a NULL requestor (PMIX_ERR_BAD_PARAM, no callback).
    pmix_status_t request(const pmix_proc_t *requestor, const pmix_proc_t targets[],
                          size_t ntargets, const pmix_info_t directives[], size_t ndirs,
                          pmix_info_cbfunc_t cbfunc, void *cbdata);
    // PMIX_JCTRL_CHECKPOINT_COMPLETE from `source` (`name`: its
    // PMIX_JOB_CTRL_CHECKPOINT, or empty): completes its part of that
    // checkpoint, or of the oldest waiting for it. False: none matched.
    bool checkpoint_complete(const pmix_proc_t &source, const std::string &name);
    // Alerts every process that declared itself preemptible; how many.
    std::size_t preempt();
    // Fails the checkpoints whose timeout expired.
    void tick();
    // The nearest checkpoint timeout (Clock::time_point::max(): none).
    JobControlEffects::Clock::time_point next_deadline() const;
    // `proc` ended: its pauses, declarations and pending checkpoints go.
    void proc_ended(const pmix_proc_t &proc);
    // How many requests of `requestor` are outstanding (can be cancelled).
    std::size_t outstanding(const pmix_proc_t &requestor) const;

    using Key = std::pair<std::string, pmix_rank_t>;

  private:
    enum class Kind { pause, checkpoint, method, preemptible };
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
        std::string checkpoint;  // the checkpoint's name
        pmix_info_cbfunc_t cbfunc = nullptr;
        void *cbdata = nullptr;
        JobControlEffects::Clock::time_point deadline = JobControlEffects::Clock::time_point::max();
    };
    // A checkpoint's answer, made outside the mutex.
    struct Finished {
        pmix_info_cbfunc_t cbfunc;
        void *cbdata;
        pmix_status_t status;
        std::string reason, checkpoint;
    };
    struct Request;

    static pmix_status_t parse_methods(const pmix_value_t &v, std::vector<Method> &out,
                                       std::string &reason);
    static pmix_status_t parse(const pmix_info_t directives[], size_t ndirs, Request &req,
                               std::string &reason);
    pmix_status_t resolve(const pmix_proc_t targets[], size_t ntargets,
                          std::vector<RunningProc> &out, std::string &reason);
    void answer(pmix_info_cbfunc_t cbfunc, void *cbdata, pmix_status_t status,
                const std::string &reason, const std::string &checkpoint = "");
    void finish(std::vector<Finished> &finished);
    // Under mu_.
    void undo(Tracked &t, std::vector<Finished> &finished);
    bool id_taken(const Key &requestor, const std::string &id) const;
    void forget_paused(const std::vector<RunningProc> &procs);
    void checkpoint_done_by(std::list<Tracked>::iterator t, const Key &proc, pmix_status_t status,
                            const std::string &reason, std::vector<Finished> &finished);

    pmix_status_t cancel(const Key &me, const Request &req, pmix_info_cbfunc_t cbfunc,
                         void *cbdata);
    pmix_status_t declare(const pmix_proc_t &requestor, const Request &req,
                          pmix_info_cbfunc_t cbfunc, void *cbdata);
    pmix_status_t checkpoint(const pmix_proc_t &requestor, const Request &req,
                             const std::vector<RunningProc> &procs,
                             std::unique_lock<std::mutex> &lock, pmix_info_cbfunc_t cbfunc,
                             void *cbdata);

    JobControlEffects &fx_;
    mutable std::mutex mu_;
    std::list<Tracked> tracked_;
    std::uint64_t next_serial_ = 1;
};

}  // namespace pmixrun
