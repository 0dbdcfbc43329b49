// pmixrun's job-control logic (tools/pmixrun/job_controller.*) without
// processes: a fake process table, recorded signals and notifications, a fake
// clock. Request ids, cancel by id and of all a requestor's requests, target
// resolution, the checkpoint method registry, checkpoint completion and
// timeout, preemption declarations. The integration tests
// (jobctl_host_client.c under pmixrun) show the same with real processes.
#include "job_controller.hpp"

#include <gtest/gtest.h>

#include <pmix.h>
#include <signal.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

using pmixrun::JobControlEffects;
using pmixrun::JobController;
using pmixrun::RunningProc;

pmix_proc_t proc(const char *ns, pmix_rank_t rank) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, ns, rank);
    return p;
}

struct FakeEffects final : JobControlEffects {
    std::map<std::pair<std::string, pmix_rank_t>, pid_t> table;
    std::vector<std::pair<pid_t, int>> signals;
    struct Asked {
        pmix_proc_t target;
        pmix_status_t code;
        std::string name, id;
    };
    std::vector<Asked> asked;
    std::vector<std::pair<pmix_proc_t, std::string>> alerted;
    Clock::time_point clock{};
    std::vector<std::string> lines;

    std::vector<RunningProc> find(const pmix_proc_t &target) override {
        std::vector<RunningProc> out;
        for (const auto &[key, pid] : table) {
            if (key.first != target.nspace) continue;
            if (target.rank != PMIX_RANK_WILDCARD && key.second != target.rank) continue;
            out.push_back({proc(key.first.c_str(), key.second), pid});
        }
        return out;
    }
    int signal(pid_t pid, int sig) override {
        signals.emplace_back(pid, sig);
        return 0;
    }
    pmix_status_t ask_checkpoint(const pmix_proc_t &target, pmix_status_t code,
                                 const std::string &name, const std::string &id) override {
        asked.push_back({target, code, name, id});
        return PMIX_SUCCESS;
    }
    pmix_status_t alert_preempt(const pmix_proc_t &target, const std::string &id) override {
        alerted.emplace_back(target, id);
        return PMIX_SUCCESS;
    }
    Clock::time_point now() override { return clock; }
    void say(const std::string &line) override { lines.push_back(line); }
};

// One request's answer, as its callback saw it.
struct Reply {
    bool called = false;
    pmix_status_t status = PMIX_ERR_NOT_AVAILABLE;
    std::map<std::string, std::string> results;  // string results by key

    static void cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                   pmix_release_cbfunc_t release, void *release_data) {
        auto *r = static_cast<Reply *>(cbdata);
        EXPECT_FALSE(r->called) << "answered twice";
        r->called = true;
        r->status = status;
        for (size_t i = 0; i < ninfo; ++i) {
            if (info[i].value.type == PMIX_STRING && info[i].value.data.string != nullptr)
                r->results[info[i].key] = info[i].value.data.string;
        }
        if (release != nullptr) release(release_data);
    }
};

// Directives built one by one.
struct Dirs {
    std::vector<pmix_info_t> v;
    ~Dirs() {
        for (auto &i : v) PMIx_Value_destruct(&i.value);
    }
    Dirs &add(const char *key, const void *val, pmix_data_type_t t) {
        v.emplace_back();
        PMIX_INFO_CONSTRUCT(&v.back());
        PMIx_Info_load(&v.back(), key, val, t);
        return *this;
    }
    Dirs &flag(const char *key) {
        bool b = true;
        return add(key, &b, PMIX_BOOL);
    }
    Dirs &str(const char *key, const char *s) { return add(key, s, PMIX_STRING); }
    Dirs &integer(const char *key, int i) { return add(key, &i, PMIX_INT); }
    // PMIX_JOB_CTRL_CHECKPOINT_METHOD with `methods` inside.
    Dirs &methods(Dirs &inner) {
        pmix_data_array_t a;
        a.type = PMIX_INFO;
        a.size = inner.v.size();
        a.array = inner.v.data();
        return add(PMIX_JOB_CTRL_CHECKPOINT_METHOD, &a, PMIX_DATA_ARRAY);
    }
};

struct JobControllerWithoutProcesses : ::testing::Test {
    FakeEffects fx;
    JobController jc{fx};
    const pmix_proc_t a = proc("job", 0), b = proc("job", 1), c = proc("job", 2);
    const pmix_proc_t tool = proc("tool", 0);

    JobControllerWithoutProcesses() {
        fx.table[{"job", 0}] = 100;
        fx.table[{"job", 1}] = 101;
        fx.table[{"job", 2}] = 102;
        fx.table[{"other", 0}] = 200;
    }

    Reply ask(const pmix_proc_t &requestor, std::vector<pmix_proc_t> targets, Dirs &d) {
        Reply r;
        EXPECT_EQ(jc.request(&requestor, targets.data(), targets.size(), d.v.data(), d.v.size(),
                             Reply::cb, &r),
                  PMIX_SUCCESS);
        return r;
    }
    // A request answered at once.
    pmix_status_t now(const pmix_proc_t &requestor, std::vector<pmix_proc_t> targets, Dirs &d) {
        Reply r = ask(requestor, std::move(targets), d);
        EXPECT_TRUE(r.called);
        return r.status;
    }
    pmix_status_t cancel(const pmix_proc_t &requestor, const char *id) {
        Dirs d;
        if (id != nullptr) {
            d.str(PMIX_JOB_CTRL_CANCEL, id);
        } else {
            d.add(PMIX_JOB_CTRL_CANCEL, nullptr, PMIX_STRING);
        }
        return now(requestor, {}, d);
    }
    pmix_status_t pause(const pmix_proc_t &requestor, std::vector<pmix_proc_t> targets,
                        const char *id = nullptr) {
        Dirs d;
        d.flag(PMIX_JOB_CTRL_PAUSE);
        if (id != nullptr) d.str(PMIX_JOB_CTRL_ID, id);
        return now(requestor, std::move(targets), d);
    }
    std::vector<std::pair<pid_t, int>> take_signals() { return std::exchange(fx.signals, {}); }
};

using Signals = std::vector<std::pair<pid_t, int>>;

TEST_F(JobControllerWithoutProcesses, PauseIsKeptUnderItsIdAndCancelByIdContinuesItsProcesses) {
    ASSERT_EQ(pause(tool, {a, b}, "p1"), PMIX_SUCCESS);
    EXPECT_EQ(take_signals(), (Signals{{100, SIGSTOP}, {101, SIGSTOP}}));
    EXPECT_EQ(jc.outstanding(tool), 1u);
    EXPECT_EQ(cancel(tool, "p1"), PMIX_SUCCESS);
    EXPECT_EQ(take_signals(), (Signals{{100, SIGCONT}, {101, SIGCONT}}));
    EXPECT_EQ(jc.outstanding(tool), 0u);
    EXPECT_EQ(cancel(tool, "p1"), PMIX_ERR_NOT_FOUND) << "already withdrawn";
    EXPECT_TRUE(take_signals().empty());
}

TEST_F(JobControllerWithoutProcesses, IdsArePerRequestorAndADuplicateIsRefusedWithoutActing) {
    ASSERT_EQ(pause(tool, {a}, "same"), PMIX_SUCCESS);
    take_signals();
    EXPECT_EQ(pause(tool, {b}, "same"), PMIX_ERR_EXISTS);
    EXPECT_TRUE(take_signals().empty()) << "a refused request does nothing";
    EXPECT_EQ(pause(c, {b}, "same"), PMIX_SUCCESS) << "another requestor may use the id";
    EXPECT_EQ(take_signals(), (Signals{{101, SIGSTOP}}));
    // Cancelling by id reaches only the requestor's own request.
    EXPECT_EQ(cancel(c, "same"), PMIX_SUCCESS);
    EXPECT_EQ(take_signals(), (Signals{{101, SIGCONT}}));
    EXPECT_EQ(jc.outstanding(tool), 1u);
}

TEST_F(JobControllerWithoutProcesses, CancelWithoutIdWithdrawsEveryRequestOfTheRequestorOnly) {
    ASSERT_EQ(pause(tool, {a}, "t1"), PMIX_SUCCESS);
    ASSERT_EQ(pause(tool, {b}), PMIX_SUCCESS);  // no id: still cancellable by "all"
    ASSERT_EQ(pause(c, {proc("other", 0)}, "c1"), PMIX_SUCCESS);
    Dirs pre;
    pre.flag(PMIX_JOB_CTRL_PREEMPTIBLE);
    ASSERT_EQ(now(tool, {}, pre), PMIX_SUCCESS);
    EXPECT_EQ(jc.outstanding(tool), 3u);
    take_signals();

    EXPECT_EQ(cancel(tool, nullptr), PMIX_SUCCESS);
    EXPECT_EQ(take_signals(), (Signals{{100, SIGCONT}, {101, SIGCONT}}));
    EXPECT_EQ(jc.outstanding(tool), 0u);
    EXPECT_EQ(jc.outstanding(c), 1u) << "another requestor's pause stays";
    EXPECT_EQ(jc.preempt(), 0u) << "the preemptible declaration went too";
    EXPECT_EQ(cancel(tool, nullptr), PMIX_SUCCESS) << "nothing left: still success";
}

TEST_F(JobControllerWithoutProcesses, DoneAtOnceRequestsAreNotKeptSoTheirIdCannotBeCancelled) {
    Dirs sig;
    sig.integer(PMIX_JOB_CTRL_SIGNAL, SIGUSR2).str(PMIX_JOB_CTRL_ID, "s");
    ASSERT_EQ(now(tool, {a}, sig), PMIX_SUCCESS);
    EXPECT_EQ(take_signals(), (Signals{{100, SIGUSR2}}));
    EXPECT_EQ(jc.outstanding(tool), 0u);
    EXPECT_EQ(cancel(tool, "s"), PMIX_ERR_NOT_FOUND);
    Dirs again;
    again.integer(PMIX_JOB_CTRL_SIGNAL, SIGUSR2).str(PMIX_JOB_CTRL_ID, "s");
    EXPECT_EQ(now(tool, {a}, again), PMIX_SUCCESS) << "the id is free again";
}

TEST_F(JobControllerWithoutProcesses, WildcardNamesEveryRankEachProcessIsSignalledOnce) {
    Dirs d;
    d.integer(PMIX_JOB_CTRL_SIGNAL, SIGHUP);
    ASSERT_EQ(now(tool, {proc("job", PMIX_RANK_WILDCARD), b}, d), PMIX_SUCCESS);
    EXPECT_EQ(take_signals(), (Signals{{100, SIGHUP}, {101, SIGHUP}, {102, SIGHUP}}));
}

TEST_F(JobControllerWithoutProcesses, OneBadTargetRefusesTheWholeRequest) {
    for (const auto &bad :
         {proc("job", 7), proc("nosuch", 0), proc("nosuch", PMIX_RANK_WILDCARD)}) {
        Dirs d;
        d.flag(PMIX_JOB_CTRL_KILL);
        Reply r = ask(tool, {a, bad}, d);
        ASSERT_TRUE(r.called);
        EXPECT_EQ(r.status, PMIX_ERR_NOT_FOUND);
        EXPECT_NE(r.results[PMIX_EVENT_TEXT_MESSAGE].find(bad.nspace), std::string::npos);
        EXPECT_TRUE(take_signals().empty()) << "not even the good target";
    }
    Dirs none;
    none.flag(PMIX_JOB_CTRL_KILL);
    EXPECT_EQ(now(tool, {}, none), PMIX_ERR_NOT_FOUND) << "no target at all";
}

TEST_F(JobControllerWithoutProcesses, ResumeReleasesAnyonesPauseAndAPauseHoldingNothingEnds) {
    ASSERT_EQ(pause(tool, {a, b}, "p"), PMIX_SUCCESS);
    Dirs resume;
    resume.flag(PMIX_JOB_CTRL_RESUME);
    ASSERT_EQ(now(c, {a}, resume), PMIX_SUCCESS);  // another requestor resumes one of them
    EXPECT_EQ(jc.outstanding(tool), 1u) << "b is still held";
    Dirs terminate;
    terminate.flag(PMIX_JOB_CTRL_TERMINATE);
    take_signals();
    ASSERT_EQ(now(c, {b}, terminate), PMIX_SUCCESS);
    EXPECT_EQ(take_signals(), (Signals{{101, SIGTERM}, {101, SIGCONT}}))
        << "a paused process is continued to act on SIGTERM";
    EXPECT_EQ(jc.outstanding(tool), 0u) << "the pause holds nothing and is done";
    EXPECT_EQ(pause(tool, {a}, "p"), PMIX_SUCCESS) << "its id is free again";
}

TEST_F(JobControllerWithoutProcesses, CheckpointOfAProcessWithoutMethodFailsAndAsksNobody) {
    Dirs m;
    m.integer(PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, SIGUSR2);
    Dirs decl;
    decl.methods(m);
    ASSERT_EQ(now(a, {}, decl), PMIX_SUCCESS);  // a declared, b did not
    Dirs ck;
    ck.str(PMIX_JOB_CTRL_CHECKPOINT, "ck1");
    Reply r = ask(tool, {a, b}, ck);
    ASSERT_TRUE(r.called);
    EXPECT_EQ(r.status, PMIX_ERR_PROC_CHECKPOINT);
    EXPECT_NE(r.results[PMIX_EVENT_TEXT_MESSAGE].find("job:1"), std::string::npos);
    EXPECT_TRUE(take_signals().empty());
    EXPECT_TRUE(fx.asked.empty());
}

TEST_F(JobControllerWithoutProcesses, CheckpointUsesTheFirstKnownMethodAndWaitsForEveryTarget) {
    // a: an unknown method first (skipped), then a signal, then the event.
    Dirs ma;
    ma.flag("pmix.jctrl.ckmethod.unknown")
        .integer(PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, SIGUSR2)
        .flag(PMIX_JOB_CTRL_CHECKPOINT_EVENT);
    Dirs da;
    da.methods(ma);
    ASSERT_EQ(now(a, {}, da), PMIX_SUCCESS);
    // b: the event with its own code.
    Dirs mb;
    mb.add(PMIX_JOB_CTRL_CHECKPOINT_EVENT, nullptr, PMIX_UNDEF);
    Dirs db;
    db.methods(mb);
    ASSERT_EQ(now(b, {}, db), PMIX_SUCCESS);

    Dirs ck;
    ck.str(PMIX_JOB_CTRL_CHECKPOINT, "ck1").str(PMIX_JOB_CTRL_ID, "req");
    Reply r = ask(tool, {a, b}, ck);
    EXPECT_FALSE(r.called) << "pending until every target completed";
    EXPECT_EQ(take_signals(), (Signals{{100, SIGUSR2}}));
    ASSERT_EQ(fx.asked.size(), 1u);
    EXPECT_TRUE(PMIX_CHECK_PROCID(&fx.asked[0].target, &b));
    EXPECT_EQ(fx.asked[0].code, PMIX_JCTRL_CHECKPOINT);
    EXPECT_EQ(fx.asked[0].name, "ck1");
    EXPECT_EQ(fx.asked[0].id, "req");

    EXPECT_FALSE(jc.checkpoint_complete(c, "")) << "c was not asked";
    EXPECT_TRUE(jc.checkpoint_complete(a, ""));
    EXPECT_FALSE(r.called);
    EXPECT_FALSE(jc.checkpoint_complete(a, "")) << "a's part is done";
    EXPECT_TRUE(jc.checkpoint_complete(b, "ck1"));
    ASSERT_TRUE(r.called);
    EXPECT_EQ(r.status, PMIX_SUCCESS);
    EXPECT_EQ(r.results[PMIX_JOB_CTRL_CHECKPOINT], "ck1");
    EXPECT_EQ(jc.outstanding(tool), 0u);
}

TEST_F(JobControllerWithoutProcesses, ANewDeclarationReplacesTheMethodAndCancelForgetsIt) {
    Dirs m1;
    m1.integer(PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, SIGUSR2);
    Dirs d1;
    d1.methods(m1).str(PMIX_JOB_CTRL_ID, "methods");
    ASSERT_EQ(now(a, {}, d1), PMIX_SUCCESS);
    Dirs m2;
    m2.integer(PMIX_JOB_CTRL_CHECKPOINT_EVENT, -4242);
    Dirs d2;
    d2.methods(m2).str(PMIX_JOB_CTRL_ID, "methods");
    ASSERT_EQ(now(a, {}, d2), PMIX_SUCCESS) << "the replaced declaration does not hold its id";
    EXPECT_EQ(jc.outstanding(a), 1u);

    Dirs ck;
    ck.str(PMIX_JOB_CTRL_CHECKPOINT, "x");
    Reply r = ask(tool, {a}, ck);
    EXPECT_TRUE(take_signals().empty());
    ASSERT_EQ(fx.asked.size(), 1u);
    EXPECT_EQ(fx.asked[0].code, -4242);
    ASSERT_TRUE(jc.checkpoint_complete(a, "x"));
    EXPECT_EQ(r.status, PMIX_SUCCESS);

    EXPECT_EQ(cancel(a, "methods"), PMIX_SUCCESS);
    Dirs ck2;
    ck2.str(PMIX_JOB_CTRL_CHECKPOINT, "y");
    EXPECT_EQ(now(tool, {a}, ck2), PMIX_ERR_PROC_CHECKPOINT) << "the method was forgotten";
}

TEST_F(JobControllerWithoutProcesses, BadMethodDeclarationsAreRefused) {
    Dirs unknown_only;
    unknown_only.flag("pmix.jctrl.ckmethod.unknown");
    Dirs d1;
    d1.methods(unknown_only);
    EXPECT_EQ(now(a, {}, d1), PMIX_ERR_NOT_SUPPORTED);
    Dirs kill_sig;
    kill_sig.integer(PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, SIGKILL);
    Dirs d2;
    d2.methods(kill_sig);
    EXPECT_EQ(now(a, {}, d2), PMIX_ERR_BAD_PARAM);
    Dirs d3;
    d3.flag(PMIX_JOB_CTRL_CHECKPOINT_EVENT);  // outside an array
    EXPECT_EQ(now(a, {}, d3), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(jc.outstanding(a), 0u);
}

TEST_F(JobControllerWithoutProcesses, CheckpointTimeoutCancelAndEndOfATarget) {
    Dirs m;
    m.integer(PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, SIGUSR2);
    for (const auto &p : {a, b}) {
        Dirs d;
        d.methods(m);
        ASSERT_EQ(now(p, {}, d), PMIX_SUCCESS);
    }
    // A timeout of 5 s beside the checkpoint ("pmix.jctrl.ckptsig").
    Dirs t;
    t.str(PMIX_JOB_CTRL_CHECKPOINT, "timed").integer(PMIX_JOB_CTRL_CHECKPOINT_TIMEOUT, 5);
    Reply timed = ask(tool, {a}, t);
    fx.clock += std::chrono::seconds(4);
    jc.tick();
    EXPECT_FALSE(timed.called);
    fx.clock += std::chrono::seconds(1);
    jc.tick();
    ASSERT_TRUE(timed.called);
    EXPECT_EQ(timed.status, PMIX_ERR_TIMEOUT);

    Dirs c1;
    c1.str(PMIX_JOB_CTRL_CHECKPOINT, "cancelled").str(PMIX_JOB_CTRL_ID, "ck");
    Reply cancelled = ask(tool, {a}, c1);
    EXPECT_FALSE(cancelled.called);
    EXPECT_EQ(cancel(tool, "ck"), PMIX_SUCCESS);
    ASSERT_TRUE(cancelled.called);
    EXPECT_EQ(cancelled.status, PMIX_ERR_JOB_CANCELED);
    EXPECT_FALSE(jc.checkpoint_complete(a, "cancelled")) << "a late completion is ignored";

    Dirs e;
    e.str(PMIX_JOB_CTRL_CHECKPOINT, "ended");
    Reply ended = ask(tool, {a, b}, e);
    ASSERT_TRUE(jc.checkpoint_complete(a, ""));
    jc.proc_ended(b);
    ASSERT_TRUE(ended.called);
    EXPECT_EQ(ended.status, PMIX_ERR_PROC_CHECKPOINT);
    // b's declaration ended with it.
    fx.table.erase({"job", 1});
    fx.table[{"job", 1}] = 111;  // a new process in its place
    Dirs again;
    again.str(PMIX_JOB_CTRL_CHECKPOINT, "again");
    EXPECT_EQ(now(tool, {b}, again), PMIX_ERR_PROC_CHECKPOINT);
}

TEST_F(JobControllerWithoutProcesses, PreemptAlertsTheDeclaredProcessesWithTheirIds) {
    Dirs pa;
    pa.flag(PMIX_JOB_CTRL_PREEMPTIBLE).str(PMIX_JOB_CTRL_ID, "pre");
    ASSERT_EQ(now(a, {}, pa), PMIX_SUCCESS);
    Dirs pb;
    pb.flag(PMIX_JOB_CTRL_PREEMPTIBLE);
    ASSERT_EQ(now(b, {}, pb), PMIX_SUCCESS);
    bool no = false;
    Dirs withdraw;
    withdraw.add(PMIX_JOB_CTRL_PREEMPTIBLE, &no, PMIX_BOOL);
    ASSERT_EQ(now(b, {}, withdraw), PMIX_SUCCESS);
    EXPECT_EQ(jc.preempt(), 1u);
    ASSERT_EQ(fx.alerted.size(), 1u);
    EXPECT_TRUE(PMIX_CHECK_PROCID(&fx.alerted[0].first, &a));
    EXPECT_EQ(fx.alerted[0].second, "pre");
    jc.proc_ended(a);
    EXPECT_EQ(jc.preempt(), 0u) << "the declaration ends with its process";
}

TEST_F(JobControllerWithoutProcesses, RefusalsSayWhy) {
    auto check = [&](Dirs &d, pmix_status_t want, const char *in_reason) {
        Reply r = ask(tool, {a}, d);
        ASSERT_TRUE(r.called);
        EXPECT_EQ(r.status, want) << in_reason;
        EXPECT_NE(r.results[PMIX_EVENT_TEXT_MESSAGE].find(in_reason), std::string::npos)
            << r.results[PMIX_EVENT_TEXT_MESSAGE];
    };
    Dirs provision;
    provision.str(PMIX_JOB_CTRL_PROVISION, "node[1-4]");
    check(provision, PMIX_ERR_NOT_SUPPORTED, "provision");
    Dirs restart;
    restart.str(PMIX_JOB_CTRL_RESTART, "ck1");
    check(restart, PMIX_ERR_NOT_SUPPORTED, "restart");
    Dirs unknown;
    unknown.flag("pmix.jctrl.nosuch");
    check(unknown, PMIX_ERR_NOT_SUPPORTED, "pmix.jctrl.nosuch");
    Dirs two;
    two.flag(PMIX_JOB_CTRL_PAUSE).flag(PMIX_JOB_CTRL_KILL);
    check(two, PMIX_ERR_BAD_PARAM, "more than one action");
    Dirs sig0;
    sig0.integer(PMIX_JOB_CTRL_SIGNAL, 0);
    check(sig0, PMIX_ERR_BAD_PARAM, "PMIX_JOB_CTRL_SIGNAL");
    Dirs empty_id;
    empty_id.flag(PMIX_JOB_CTRL_PAUSE).str(PMIX_JOB_CTRL_ID, "");
    check(empty_id, PMIX_ERR_BAD_PARAM, "PMIX_JOB_CTRL_ID");
    EXPECT_TRUE(take_signals().empty());
    EXPECT_EQ(jc.request(nullptr, nullptr, 0, nullptr, 0, Reply::cb, nullptr), PMIX_ERR_BAD_PARAM);
}

}  // namespace
