// The registration and chain rules of event notification (RFC 0000, RFC 0001,
// PMIx 4.2 chapter "Event Notification"), on the registry and the chain alone:
// no server, no progress thread (the chain's continuations run from a queue
// the test drains).
#include "event/chain.hpp"
#include "event/event.hpp"
#include "event/registry.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace {

using pmixpp::events::Category;
using pmixpp::events::Event;
using pmixpp::events::EventChain;
using pmixpp::events::Handler;
using pmixpp::events::HandlerRegistry;
using pmixpp::events::RegistrationSpec;

constexpr pmix_status_t kA = PMIX_EXTERNAL_ERR_BASE - 1;
constexpr pmix_status_t kB = PMIX_EXTERNAL_ERR_BASE - 2;

pmix_proc_t proc(const char *ns, pmix_rank_t r) {
    pmix_proc_t p{};
    PMIX_LOAD_PROCID(&p, ns, r);
    return p;
}

// Builds info arrays in tests; the values are released with the object.
struct Infos {
    std::vector<pmix_info_t> v;
    ~Infos() {
        for (auto &i : v) PMIx_Value_destruct(&i.value);
    }
    Infos &str(const char *key, const char *value) {
        push().value.type = PMIX_UNDEF;
        PMIx_Info_load(&v.back(), key, value, PMIX_STRING);
        return *this;
    }
    Infos &flag(const char *key, bool value = true) {
        push();
        PMIx_Info_load(&v.back(), key, &value, PMIX_BOOL);
        return *this;
    }
    Infos &bare(const char *key) {  // no value: PMIX_UNDEF means true (Open MPI's pmix.evprepend)
        PMIX_LOAD_KEY(push().key, key);
        return *this;
    }
    Infos &range(pmix_data_range_t r) {
        push();
        PMIx_Info_load(&v.back(), PMIX_RANGE, &r, PMIX_DATA_RANGE);
        return *this;
    }
    Infos &affected(const pmix_proc_t &p) {
        push();
        PMIx_Info_load(&v.back(), PMIX_EVENT_AFFECTED_PROC, &p, PMIX_PROC);
        return *this;
    }
    pmix_info_t &push() {
        v.emplace_back();
        std::memset(&v.back(), 0, sizeof(pmix_info_t));
        return v.back();
    }
};

void noop_handler(size_t, pmix_status_t, const pmix_proc_t *, pmix_info_t[], size_t, pmix_info_t[],
                  size_t, pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    cbfunc(PMIX_SUCCESS, nullptr, 0, nullptr, nullptr, cbdata);
}

class Registry : public ::testing::Test {
  protected:
    // Registers and activates; returns the id or the error code (negative).
    long add(std::vector<pmix_status_t> codes, const Infos &info = {}) {
        auto spec = RegistrationSpec::parse(codes, info.v);
        if (!spec) return spec.status().code();
        auto id = reg.add(std::move(spec).value(), noop_handler);
        if (!id) return id.status().code();
        reg.activate(id.value());
        return static_cast<long>(id.value());
    }
    long add_named(std::vector<pmix_status_t> codes, const char *name, const char *key = nullptr,
                   const char *target = nullptr) {
        Infos info;
        info.str(PMIX_EVENT_HDLR_NAME, name);
        if (key != nullptr && target != nullptr)
            info.str(key, target);
        else if (key != nullptr)
            info.flag(key);
        long id = add(std::move(codes), info);
        if (id >= 0) names[static_cast<std::size_t>(id)] = name;
        return id;
    }
    std::string chain_names(const Event &ev, const pmix_proc_t &self = proc("job", 0)) {
        std::string out;
        for (const auto &h : reg.chain_for(ev, self))
            out += (out.empty() ? "" : " ") + h->spec.name;
        return out;
    }
    static Event event(pmix_status_t code, const pmix_proc_t &source = proc("job", 1),
                       pmix_data_range_t range = PMIX_RANGE_NAMESPACE, const Infos &info = {}) {
        return Event::make(code, &source, range, info.v.data(), info.v.size());
    }
    HandlerRegistry reg;
    std::map<std::size_t, std::string> names;
};

TEST_F(Registry, SingleCodeThenMultiCodeThenDefault) {
    add_named({}, "default");
    add_named({kA, kB}, "multi");
    add_named({kA}, "single");
    EXPECT_EQ(chain_names(event(kA)), "single multi default");
    EXPECT_EQ(chain_names(event(kB)), "multi default");
    EXPECT_EQ(chain_names(event(kA - 100)), "default");
}

TEST_F(Registry, SeveralHandlersPerCodeAndPerCodeSet) {
    add_named({kA}, "s1");
    add_named({kA}, "s2");
    add_named({kA, kB}, "m1");
    add_named({kA, kB}, "m2");
    EXPECT_EQ(chain_names(event(kA)), "s2 s1 m2 m1");
}

TEST_F(Registry, DefaultPositionWithinCategoryIsPrepend) {
    add_named({kA}, "older");
    add_named({kA}, "newer");
    EXPECT_EQ(chain_names(event(kA)), "newer older");
}

TEST_F(Registry, AppendGoesToTheEndButBeforeLastInCategory) {
    add_named({kA}, "lastcat", PMIX_EVENT_HDLR_LAST_IN_CATEGORY);
    add_named({kA}, "x");
    add_named({kA}, "appended", PMIX_EVENT_HDLR_APPEND);
    EXPECT_EQ(chain_names(event(kA)), "x appended lastcat");
}

TEST_F(Registry, PrependGoesToTheFrontButAfterFirstInCategory) {
    add_named({kA}, "firstcat", PMIX_EVENT_HDLR_FIRST_IN_CATEGORY);
    add_named({kA}, "x", PMIX_EVENT_HDLR_APPEND);
    add_named({kA}, "prepended", PMIX_EVENT_HDLR_PREPEND);
    EXPECT_EQ(chain_names(event(kA)), "firstcat prepended x");
}

TEST_F(Registry, BareAttributeWithoutValueMeansTrue) {
    add_named({kA}, "x");
    Infos info;
    info.str(PMIX_EVENT_HDLR_NAME, "appended").bare(PMIX_EVENT_HDLR_APPEND);
    ASSERT_GE(add({kA}, info), 0);
    EXPECT_EQ(chain_names(event(kA)), "x appended");
}

TEST_F(Registry, HandlerNamedFirstRunsBeforeSingleStatusHandlers) {
    add_named({kA}, "single");
    add_named({}, "first", PMIX_EVENT_HDLR_FIRST);
    add_named({}, "last", PMIX_EVENT_HDLR_LAST);
    add_named({}, "default");
    EXPECT_EQ(chain_names(event(kA)), "first single default last");
}

TEST_F(Registry, FirstAndLastKeepTheirCodes) {
    add_named({kB}, "first", PMIX_EVENT_HDLR_FIRST);
    add_named({kA}, "single");
    EXPECT_EQ(chain_names(event(kA)), "single");
}

TEST_F(Registry, SecondFirstOrLastIsAnError) {
    ASSERT_GE(add_named({kA}, "f", PMIX_EVENT_HDLR_FIRST), 0);
    ASSERT_GE(add_named({}, "l", PMIX_EVENT_HDLR_LAST), 0);
    EXPECT_EQ(add_named({kB}, "f2", PMIX_EVENT_HDLR_FIRST), PMIX_ERR_EVENT_REGISTRATION);
    EXPECT_EQ(add_named({kB}, "l2", PMIX_EVENT_HDLR_LAST), PMIX_ERR_EVENT_REGISTRATION);
    EXPECT_EQ(reg.size(), 2u);
}

TEST_F(Registry, SecondFirstOrLastInCategoryIsAnErrorOnlyInThatCategory) {
    ASSERT_GE(add_named({kA}, "f", PMIX_EVENT_HDLR_FIRST_IN_CATEGORY), 0);
    EXPECT_EQ(add_named({kB}, "f2", PMIX_EVENT_HDLR_FIRST_IN_CATEGORY),
              PMIX_ERR_EVENT_REGISTRATION);
    EXPECT_GE(add_named({}, "f3", PMIX_EVENT_HDLR_FIRST_IN_CATEGORY), 0);
    ASSERT_GE(add_named({kA}, "l", PMIX_EVENT_HDLR_LAST_IN_CATEGORY), 0);
    EXPECT_EQ(add_named({kB}, "l2", PMIX_EVENT_HDLR_LAST_IN_CATEGORY), PMIX_ERR_EVENT_REGISTRATION);
}

TEST_F(Registry, DeregisteringFirstReopensThePosition) {
    long id = add_named({kA}, "f", PMIX_EVENT_HDLR_FIRST);
    ASSERT_TRUE(reg.remove(static_cast<std::size_t>(id)));
    EXPECT_GE(add_named({kA}, "f2", PMIX_EVENT_HDLR_FIRST), 0);
}

TEST_F(Registry, DuplicateNameIsAnError) {
    ASSERT_GE(add_named({kA}, "same"), 0);
    EXPECT_EQ(add_named({kB, kA}, "same"), PMIX_ERR_EVENT_REGISTRATION);
    EXPECT_EQ(add_named({}, "same", PMIX_EVENT_HDLR_LAST), PMIX_ERR_EVENT_REGISTRATION);
}

TEST_F(Registry, BeforeAndAfterPlaceNextToTheNamedHandler) {
    add_named({kA}, "a");
    add_named({kA}, "b");  // b a
    add_named({kA}, "before_a", PMIX_EVENT_HDLR_BEFORE, "a");
    add_named({kA}, "after_b", PMIX_EVENT_HDLR_AFTER, "b");
    EXPECT_EQ(chain_names(event(kA)), "b after_b before_a a");
}

TEST_F(Registry, BeforeOrAfterAnUnknownHandlerIsAnError) {
    EXPECT_EQ(add_named({kA}, "x", PMIX_EVENT_HDLR_BEFORE, "nobody"), PMIX_ERR_EVENT_REGISTRATION);
    EXPECT_EQ(add_named({kA}, "y", PMIX_EVENT_HDLR_AFTER, "nobody"), PMIX_ERR_EVENT_REGISTRATION);
    EXPECT_EQ(reg.size(), 0u);
}

TEST_F(Registry, BeforeOrAfterAHandlerOfAnotherCategoryIsAnError) {
    add_named({kA}, "single");
    add_named({}, "default");
    EXPECT_EQ(add_named({kA, kB}, "m", PMIX_EVENT_HDLR_BEFORE, "single"),
              PMIX_ERR_EVENT_REGISTRATION);
    EXPECT_EQ(add_named({kA}, "s", PMIX_EVENT_HDLR_AFTER, "default"), PMIX_ERR_EVENT_REGISTRATION);
}

TEST_F(Registry, NothingGoesBeforeTheFirstOrAfterTheLast) {
    add_named({kA}, "firstcat", PMIX_EVENT_HDLR_FIRST_IN_CATEGORY);
    add_named({kA}, "lastcat", PMIX_EVENT_HDLR_LAST_IN_CATEGORY);
    add_named({kA}, "first", PMIX_EVENT_HDLR_FIRST);
    EXPECT_EQ(add_named({kA}, "x", PMIX_EVENT_HDLR_BEFORE, "firstcat"),
              PMIX_ERR_EVENT_REGISTRATION);
    EXPECT_EQ(add_named({kA}, "y", PMIX_EVENT_HDLR_AFTER, "lastcat"), PMIX_ERR_EVENT_REGISTRATION);
    EXPECT_EQ(add_named({kA}, "z", PMIX_EVENT_HDLR_BEFORE, "first"), PMIX_ERR_EVENT_REGISTRATION);
}

TEST_F(Registry, ContradictoryPlacementsAreRefused) {
    Infos info;
    info.flag(PMIX_EVENT_HDLR_FIRST).flag(PMIX_EVENT_HDLR_LAST);
    EXPECT_EQ(add({kA}, info), PMIX_ERR_BAD_PARAM);
}

TEST_F(Registry, InactiveHandlersAreNotInTheChain) {
    auto spec = RegistrationSpec::parse(std::vector<pmix_status_t>{kA}, {});
    auto id = reg.add(std::move(spec).value(), noop_handler);
    ASSERT_TRUE(id);
    EXPECT_TRUE(reg.chain_for(event(kA), proc("job", 0)).empty());
    reg.activate(id.value());
    EXPECT_EQ(reg.chain_for(event(kA), proc("job", 0)).size(), 1u);
}

TEST_F(Registry, NonDefaultEventSkipsDefaultHandlers) {
    add_named({}, "default");
    add_named({kA}, "single");
    Infos info;
    info.flag(PMIX_EVENT_NON_DEFAULT);
    EXPECT_EQ(chain_names(event(kA, proc("job", 1), PMIX_RANGE_NAMESPACE, info)), "single");
}

TEST_F(Registry, ProcLocalRangeOnRegistrationAcceptsOnlyOwnEvents) {
    Infos info;
    info.str(PMIX_EVENT_HDLR_NAME, "own").range(PMIX_RANGE_PROC_LOCAL);
    ASSERT_GE(add({kA}, info), 0);
    add_named({kA}, "any");
    const pmix_proc_t self = proc("job", 0);
    EXPECT_EQ(chain_names(event(kA, proc("job", 1)), self), "any");
    EXPECT_EQ(chain_names(event(kA, self, PMIX_RANGE_PROC_LOCAL), self), "any own");
}

TEST_F(Registry, NamespaceRangeOnRegistrationFiltersOtherJobs) {
    Infos info;
    info.str(PMIX_EVENT_HDLR_NAME, "ours").range(PMIX_RANGE_NAMESPACE);
    ASSERT_GE(add({kA}, info), 0);
    EXPECT_EQ(chain_names(event(kA, proc("other", 0), PMIX_RANGE_GLOBAL)), "");
    EXPECT_EQ(chain_names(event(kA, proc("job", 3), PMIX_RANGE_GLOBAL)), "ours");
}

TEST_F(Registry, AffectedProcOnRegistrationNeedsThatProcInTheEvent) {
    Infos info;
    info.str(PMIX_EVENT_HDLR_NAME, "watch").affected(proc("job", 2));
    ASSERT_GE(add({kA}, info), 0);
    EXPECT_EQ(chain_names(event(kA)), "");
    Infos other, hit;
    other.affected(proc("job", 3));
    hit.affected(proc("job", 2));
    EXPECT_EQ(chain_names(event(kA, proc("job", 1), PMIX_RANGE_NAMESPACE, other)), "");
    EXPECT_EQ(chain_names(event(kA, proc("job", 1), PMIX_RANGE_NAMESPACE, hit)), "watch");
}

TEST_F(Registry, JobLevelAndEnviroLevelSelectTheEventClass) {
    Infos job, env;
    job.str(PMIX_EVENT_HDLR_NAME, "job").flag("pmix.evjob");
    env.str(PMIX_EVENT_HDLR_NAME, "env").flag("pmix.evenv");
    ASSERT_GE(add({kA}, job), 0);
    ASSERT_GE(add({kA}, env), 0);
    add_named({kA}, "both");
    pmix_proc_t sms{};
    sms.rank = PMIX_RANK_UNDEF;
    EXPECT_EQ(chain_names(event(kA, sms, PMIX_RANGE_GLOBAL)), "both env");
    EXPECT_EQ(chain_names(event(kA, proc("job", 1))), "both job");
}

// ---------------------------------------------------------------------------------------------
// the chain

struct Call {
    std::string handler;
    std::vector<std::pair<std::string, std::string>> results;  // key, value as text
};
std::vector<Call> g_calls;
// What each handler (by name) does: status to return and infos to return.
struct Script {
    pmix_status_t status = PMIX_SUCCESS;
    std::vector<pmix_info_t> returns;
    std::function<void(pmix_info_t *, size_t)> edit;  // changes the results in place
};
std::map<std::string, Script> g_script;
std::map<std::size_t, std::string> g_names;
int g_released = 0;

std::string text_of(const pmix_value_t &v) {
    switch (v.type) {
        case PMIX_STATUS:
            return std::to_string(v.data.status);
        case PMIX_BOOL:
            return v.data.flag ? "true" : "false";
        case PMIX_STRING:
            return v.data.string != nullptr ? v.data.string : "";
        default:
            return "?";
    }
}

void release_returns(pmix_status_t, void *) {
    ++g_released;
}

void scripted(size_t id, pmix_status_t, const pmix_proc_t *source, pmix_info_t[], size_t,
              pmix_info_t results[], size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
              void *cbdata) {
    ASSERT_NE(source, nullptr);
    Call c{g_names[id], {}};
    for (size_t i = 0; i < nresults; ++i)
        c.results.emplace_back(results[i].key, text_of(results[i].value));
    g_calls.push_back(c);
    Script &s = g_script[c.handler];
    if (s.edit) s.edit(results, nresults);
    cbfunc(s.status, s.returns.empty() ? nullptr : s.returns.data(), s.returns.size(),
           release_returns, nullptr, cbdata);
}

class Chain : public ::testing::Test {
  protected:
    void SetUp() override {
        g_calls.clear();
        g_script.clear();
        g_names.clear();
        g_released = 0;
    }
    void TearDown() override {
        for (auto &[n, s] : g_script) {
            for (auto &i : s.returns) PMIx_Value_destruct(&i.value);
        }
    }
    std::size_t add(const char *name, std::vector<pmix_status_t> codes = {kA}) {
        Infos info;
        info.str(PMIX_EVENT_HDLR_NAME, name).flag(PMIX_EVENT_HDLR_APPEND);
        auto spec = RegistrationSpec::parse(codes, info.v);
        auto id = reg.add(std::move(spec).value(), scripted).value();
        reg.activate(id);
        g_names[id] = name;
        return id;
    }
    void run(pmix_status_t code = kA) {
        pmix_proc_t src = proc("job", 1);
        auto ev = std::make_shared<const Event>(
            Event::make(code, &src, PMIX_RANGE_NAMESPACE, nullptr, 0));
        bool done = false;
        EventChain::run(
            reg.chain_for(*ev, proc("job", 0)), ev,
            [this](std::function<void()> t) { queue.push_back(std::move(t)); },
            [this](std::size_t id) { return reg.active(id); }, [&done] { done = true; });
        while (!queue.empty()) {
            auto t = std::move(queue.front());
            queue.pop_front();
            t();
        }
        EXPECT_TRUE(done);
    }
    static void returns(const char *handler, const char *key, bool value, bool required = false) {
        auto &r = g_script[handler].returns;
        r.emplace_back();
        std::memset(&r.back(), 0, sizeof(pmix_info_t));
        PMIx_Info_load(&r.back(), key, &value, PMIX_BOOL);
        if (required) r.back().flags |= PMIX_INFO_REQD;
    }
    static void returns_str(const char *handler, const char *key, const char *value) {
        auto &r = g_script[handler].returns;
        r.emplace_back();
        std::memset(&r.back(), 0, sizeof(pmix_info_t));
        PMIx_Info_load(&r.back(), key, value, PMIX_STRING);
    }
    HandlerRegistry reg;
    std::deque<std::function<void()>> queue;
};

TEST_F(Chain, HandlersRunInOrderEachSeeingEarlierStatusesAndResults) {
    add("h1");
    add("h2");
    add("h3");
    g_script["h1"].status = PMIX_EVENT_PARTIAL_ACTION_TAKEN;
    returns_str("h1", "note", "one");
    run();
    ASSERT_EQ(g_calls.size(), 3u);
    EXPECT_TRUE(g_calls[0].results.empty());
    using R = std::vector<std::pair<std::string, std::string>>;
    EXPECT_EQ(g_calls[1].results,
              (R{{"h1", std::to_string(PMIX_EVENT_PARTIAL_ACTION_TAKEN)}, {"note", "one"}}));
    EXPECT_EQ(
        g_calls[2].results,
        (R{{"h1", std::to_string(PMIX_EVENT_PARTIAL_ACTION_TAKEN)}, {"note", "one"}, {"h2", "0"}}));
    EXPECT_EQ(g_released, 3);  // each handler's op callback, once
}

TEST_F(Chain, ActionCompleteStopsTheChain) {
    add("h1");
    add("h2");
    g_script["h1"].status = PMIX_EVENT_ACTION_COMPLETE;
    run();
    ASSERT_EQ(g_calls.size(), 1u);
}

TEST_F(Chain, HandlerMayChangeOrDropEarlierResults) {
    add("h1");
    add("h2");
    add("h3");
    returns_str("h1", "keep", "old");
    returns_str("h1", "drop", "x");
    g_script["h2"].edit = [](pmix_info_t *r, size_t n) {
        for (size_t i = 0; i < n; ++i) {
            if (PMIX_CHECK_KEY(&r[i], "drop")) r[i].key[0] = '\0';
            if (PMIX_CHECK_KEY(&r[i], "keep")) {
                PMIx_Value_destruct(&r[i].value);
                const char *v = "new";
                PMIx_Value_load(&r[i].value, v, PMIX_STRING);
            }
        }
    };
    run();
    ASSERT_EQ(g_calls.size(), 3u);
    using R = std::vector<std::pair<std::string, std::string>>;
    EXPECT_EQ(g_calls[2].results, (R{{"h1", "0"}, {"keep", "new"}, {"h2", "0"}}));
}

TEST_F(Chain, UnnamedHandlerStillHasItsResultEntry) {
    auto spec = RegistrationSpec::parse(std::vector<pmix_status_t>{kA}, {});
    auto id = reg.add(std::move(spec).value(), scripted).value();
    reg.activate(id);
    g_names[id] = "";
    add("h2");
    run();
    ASSERT_EQ(g_calls.size(), 2u);
    ASSERT_EQ(g_calls[1].results.size(), 1u);
    EXPECT_EQ(g_calls[1].results[0].first, "pmixpp.evhdlr." + std::to_string(id));
}

TEST_F(Chain, LaterTerminationDecisionReplacesEarlierOne) {
    add("h1");
    add("h2");
    add("h3");
    returns("h1", PMIX_EVENT_WANT_TERMINATION, true);
    returns("h2", PMIX_EVENT_NO_TERMINATION, true);
    run();
    using R = std::vector<std::pair<std::string, std::string>>;
    EXPECT_EQ(g_calls[2].results,
              (R{{"h1", "0"}, {"h2", "0"}, {PMIX_EVENT_NO_TERMINATION, "true"}}));
}

TEST_F(Chain, LaterWantTerminationFalseReplacesEarlierTrue) {
    add("h1");
    add("h2");
    add("h3");
    returns("h1", PMIX_EVENT_WANT_TERMINATION, true);
    returns("h2", PMIX_EVENT_WANT_TERMINATION, false);
    run();
    using R = std::vector<std::pair<std::string, std::string>>;
    ASSERT_EQ(g_calls.size(), 3u);
    EXPECT_EQ(g_calls[1].results, (R{{"h1", "0"}, {PMIX_EVENT_WANT_TERMINATION, "true"}}));
    EXPECT_EQ(g_calls[2].results,
              (R{{"h1", "0"}, {"h2", "0"}, {PMIX_EVENT_WANT_TERMINATION, "false"}}));
}

TEST_F(Chain, LaterEntryWithTheSameKeyReplacesTheEarlierOne) {
    add("h1");
    add("h2");
    add("h3");
    returns_str("h1", "note", "one");
    returns_str("h1", "kept", "yes");
    returns_str("h2", "note", "two");
    run();
    using R = std::vector<std::pair<std::string, std::string>>;
    ASSERT_EQ(g_calls.size(), 3u);
    EXPECT_EQ(g_calls[2].results, (R{{"h1", "0"}, {"kept", "yes"}, {"h2", "0"}, {"note", "two"}}));
}

TEST_F(Chain, RequiredWantTerminationCannotBeOverridden) {
    add("h1");
    add("h2");
    add("h3");
    returns("h1", PMIX_EVENT_WANT_TERMINATION, true, true);
    returns("h2", PMIX_EVENT_NO_TERMINATION, true);
    g_script["h2"].edit = [](pmix_info_t *r, size_t n) {  // and tries to drop it
        for (size_t i = 0; i < n; ++i) {
            if (PMIX_CHECK_KEY(&r[i], PMIX_EVENT_WANT_TERMINATION)) r[i].key[0] = '\0';
        }
    };
    run();
    int want = 0, no = 0;
    for (const auto &[k, v] : g_calls[2].results) {
        want += k == PMIX_EVENT_WANT_TERMINATION;
        no += k == PMIX_EVENT_NO_TERMINATION;
    }
    EXPECT_EQ(want, 1);
    EXPECT_EQ(no, 0);
}

// What a handler found under PMIX_EVENT_RETURN_OBJECT in its info (by id),
// and how many info entries it got.
std::map<std::size_t, std::pair<void *, std::size_t>> g_objects;

void object_handler(size_t id, pmix_status_t, const pmix_proc_t *, pmix_info_t info[], size_t ninfo,
                    pmix_info_t[], size_t, pmix_event_notification_cbfunc_fn_t cbfunc,
                    void *cbdata) {
    void *found = nullptr;
    for (size_t i = 0; info != nullptr && i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_RETURN_OBJECT) &&
            info[i].value.type == PMIX_POINTER)
            found = info[i].value.data.ptr;
    }
    g_objects[id] = {found, ninfo};
    cbfunc(PMIX_SUCCESS, nullptr, 0, nullptr, nullptr, cbdata);
}

TEST_F(Chain, ReturnObjectGivenAtRegistrationIsInTheHandlersInfo) {
    g_objects.clear();
    int object = 42;
    Infos with;
    with.push();
    PMIx_Info_load(&with.v.back(), PMIX_EVENT_RETURN_OBJECT, &object, PMIX_POINTER);
    auto spec = RegistrationSpec::parse(std::vector<pmix_status_t>{kA}, with.v);
    ASSERT_TRUE(spec);
    const std::size_t id_with = reg.add(std::move(spec).value(), object_handler).value();
    reg.activate(id_with);
    auto plain = RegistrationSpec::parse(std::vector<pmix_status_t>{kA}, {});
    const std::size_t id_plain = reg.add(std::move(plain).value(), object_handler).value();
    reg.activate(id_plain);

    Infos event_info;
    event_info.str("test.detail", "x");
    pmix_proc_t src = proc("job", 1);
    auto ev = std::make_shared<const Event>(
        Event::make(kA, &src, PMIX_RANGE_NAMESPACE, event_info.v.data(), event_info.v.size()));
    EventChain::run(
        reg.chain_for(*ev, proc("job", 0)), ev,
        [this](std::function<void()> t) { queue.push_back(std::move(t)); },
        [this](std::size_t id) { return reg.active(id); });
    while (!queue.empty()) {
        auto t = std::move(queue.front());
        queue.pop_front();
        t();
    }
    ASSERT_EQ(g_objects.size(), 2u);
    EXPECT_EQ(g_objects[id_with].first, &object);
    EXPECT_EQ(g_objects[id_with].second, event_info.v.size() + 1);  // the event's info, then it
    EXPECT_EQ(g_objects[id_plain].first, nullptr);                  // only its registrant's
    EXPECT_EQ(g_objects[id_plain].second, event_info.v.size());
}

TEST_F(Chain, HandlerDeregisteredBeforeItsTurnIsSkipped) {
    add("h1");
    std::size_t h2 = add("h2");
    add("h3");
    g_script["h1"].edit = [this, h2](pmix_info_t *, size_t) { reg.remove(h2); };
    run();
    ASSERT_EQ(g_calls.size(), 2u);
    EXPECT_EQ(g_calls[1].handler, "h3");
}

TEST_F(Chain, SecondCallOfTheCompletionFunctionIsIgnored) {
    add("h1");
    add("h2");
    g_script["h1"].edit = [](pmix_info_t *, size_t) {};
    run();
    EXPECT_EQ(g_calls.size(), 2u);
}

// ---------------------------------------------------------------------------------------------
// one handler without a chain (EventChain::run_one, what ProcessEvents uses when one handler
// matches and nobody reads the results)

// What the held handler was given, for the test to complete it later.
struct Held {
    pmix_event_notification_cbfunc_fn_t cbfunc = nullptr;
    void *cbdata = nullptr;
    const pmix_info_t *info = nullptr;
    std::size_t ninfo = 0;
    const pmix_info_t *results = nullptr;
    int calls = 0;
    int completions_inline = 1;           // how many times it completes inside its call
    bool alive_after_completion = false;  // the event, after its inline completion(s)
};
Held g_held;
std::weak_ptr<const Event> g_weak;  // the event run_one was given

void holding_handler(size_t, pmix_status_t, const pmix_proc_t *, pmix_info_t info[], size_t ninfo,
                     pmix_info_t results[], size_t, pmix_event_notification_cbfunc_fn_t cbfunc,
                     void *cbdata) {
    ++g_held.calls;
    g_held.cbfunc = cbfunc;
    g_held.cbdata = cbdata;
    g_held.info = info;
    g_held.ninfo = ninfo;
    g_held.results = results;
    for (int i = 0; i < g_held.completions_inline; ++i)
        cbfunc(PMIX_SUCCESS, nullptr, 0, release_returns, nullptr, cbdata);
    // Still inside the call: what it was given is still valid.
    g_held.alive_after_completion = !g_weak.expired();
}

class One : public Chain {
  protected:
    void SetUp() override {
        Chain::SetUp();
        g_held = Held{};
        g_weak.reset();
    }
    std::size_t add_holding(const std::vector<pmix_info_t> &info = {}) {
        auto spec = RegistrationSpec::parse(std::vector<pmix_status_t>{kA}, info);
        const std::size_t id = reg.add(std::move(spec).value(), holding_handler).value();
        reg.activate(id);
        return id;
    }
    std::shared_ptr<const Event> event_with_detail() {
        Infos info;
        info.str("test.detail", "kept");
        pmix_proc_t src = proc("job", 1);
        return std::make_shared<const Event>(
            Event::make(kA, &src, PMIX_RANGE_NAMESPACE, info.v.data(), info.v.size()));
    }
    void run_one(std::size_t id, std::shared_ptr<const Event> ev) {
        EventChain::run_one(
            reg.find(id), std::move(ev),
            [this](std::function<void()> t) { queue.push_back(std::move(t)); },
            [this](std::size_t h) { return reg.active(h); });
    }
    void drain() {
        while (!queue.empty()) {
            auto t = std::move(queue.front());
            queue.pop_front();
            t();
        }
    }
};

TEST_F(One, CalledAtOnceWithNoResultsItsCallbackPostedNotCalledInline) {
    const std::size_t id = add_holding();
    run_one(id, event_with_detail());
    EXPECT_EQ(g_held.calls, 1);
    EXPECT_EQ(g_held.results, nullptr);
    ASSERT_EQ(g_held.ninfo, 1u);
    EXPECT_EQ(g_released, 0);  // as a chain: never inside the handler's call
    drain();
    EXPECT_EQ(g_released, 1);
}

TEST_F(One, SecondCompletionInsideTheCallIsIgnored) {
    const std::size_t id = add_holding();
    g_held.completions_inline = 2;
    run_one(id, event_with_detail());
    drain();
    EXPECT_EQ(g_held.calls, 1);
    EXPECT_EQ(g_released, 1);
}

TEST_F(One, EventOutlivesTheCallUntilTheCompletion) {
    const std::size_t id = add_holding();
    g_held.completions_inline = 0;
    std::weak_ptr<const Event> weak;
    {
        auto ev = event_with_detail();
        weak = ev;
        run_one(id, std::move(ev));
    }
    ASSERT_EQ(g_held.calls, 1);
    // Completed later (another thread or a later turn): the handler's info is still valid.
    EXPECT_FALSE(weak.expired());
    ASSERT_EQ(g_held.ninfo, 1u);
    EXPECT_STREQ(g_held.info[0].value.data.string, "kept");
    g_held.cbfunc(PMIX_SUCCESS, nullptr, 0, release_returns, nullptr, g_held.cbdata);
    EXPECT_TRUE(weak.expired());
    drain();
    EXPECT_EQ(g_released, 1);
}

TEST_F(One, EventOutlivesAnInlineCompletionUntilTheCallReturns) {
    const std::size_t id = add_holding();
    std::weak_ptr<const Event> weak;
    {
        auto ev = event_with_detail();
        weak = ev;
        g_weak = ev;
        run_one(id, std::move(ev));
    }
    EXPECT_EQ(g_held.calls, 1);
    EXPECT_TRUE(g_held.alive_after_completion);
    EXPECT_TRUE(weak.expired());  // released once the call returned
    drain();
    EXPECT_EQ(g_released, 1);
}

TEST_F(One, ReturnObjectFollowsTheEventsInfo) {
    g_objects.clear();
    int object = 7;
    Infos with;
    with.push();
    PMIx_Info_load(&with.v.back(), PMIX_EVENT_RETURN_OBJECT, &object, PMIX_POINTER);
    auto spec = RegistrationSpec::parse(std::vector<pmix_status_t>{kA}, with.v);
    const std::size_t id = reg.add(std::move(spec).value(), object_handler).value();
    reg.activate(id);
    run_one(id, event_with_detail());
    drain();
    ASSERT_EQ(g_objects.count(id), 1u);
    EXPECT_EQ(g_objects[id].first, &object);
    EXPECT_EQ(g_objects[id].second, 2u);
}

TEST_F(One, InactiveHandlerIsNotCalled) {
    const std::size_t id = add_holding();
    auto h = reg.find(id);
    reg.remove(id);
    EventChain::run_one(
        h, event_with_detail(), [this](std::function<void()> t) { queue.push_back(std::move(t)); },
        [this](std::size_t x) { return reg.active(x); });
    drain();
    EXPECT_EQ(g_held.calls, 0);
}

}  // namespace
