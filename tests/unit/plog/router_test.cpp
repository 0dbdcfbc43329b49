// The plog router: each entry to the modules serving its key in priority
// order, a decline to the next module and then the host, PMIX_LOG_ONCE in the
// caller's order, the combined status, completions from any thread.
#include "plog/plog_base.hpp"

#include <gtest/gtest.h>

#include <pmix.h>

#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pmixpp/mca/info.hpp"
#include "runtime/progress.hpp"

namespace {

namespace plog = pmixpp::mca::plog;
using pmixpp::mca::InfoArray;
using pmixpp::plog_base::LogCall;
using pmixpp::plog_base::LogOutcome;
using pmixpp::plog_base::NamedModule;
using pmixpp::plog_base::Router;
using pmixpp::runtime::ProgressEngine;

// Every attempt, in order: "<module or host>:<key>=<value>".
struct Journal {
    std::mutex mutex;
    std::vector<std::string> attempts;
    void add(const std::string &who, const pmix_info_t &e) {
        std::lock_guard lock(mutex);
        attempts.push_back(who + ":" + e.key + "=" +
                           (e.value.type == PMIX_STRING ? e.value.data.string : "?"));
    }
};

// Serves `key`; answers `status` for every entry, inline or from a thread.
class FakeChannel final : public plog::Module {
  public:
    FakeChannel(std::string name, std::string key, pmix_status_t status, Journal &journal,
                bool from_thread = false)
        : name_(std::move(name)),
          key_(std::move(key)),
          status_(status),
          journal_(journal),
          from_thread_(from_thread) {}
    ~FakeChannel() override {
        for (auto &t : threads_) t.join();
    }
    std::vector<std::string> channels() const override { return {key_}; }
    void log(const pmix_proc_t &, std::span<const pmix_info_t> entries,
             std::span<const pmix_info_t> directives, plog::LogCompletion done) override {
        saw_gateway = pmixpp::mca::info_flag(directives, plog::kGatewayDirective).value_or(false);
        for (const auto &e : entries) journal_.add(name_, e);
        std::vector<plog::EntryResult> results(entries.size(),
                                               plog::EntryResult(status_, name_ + " says so"));
        if (!from_thread_) {
            done(std::move(results));
            return;
        }
        threads_.emplace_back([results = std::move(results), done = std::move(done)]() mutable {
            done(std::move(results));
        });
    }
    bool saw_gateway = false;

  private:
    std::string name_, key_;
    pmix_status_t status_;
    Journal &journal_;
    bool from_thread_;
    std::vector<std::thread> threads_;
};

pmix_info_t string_info(const char *key, const char *value) {
    pmix_info_t i{};
    PMIx_Info_load(&i, key, value, PMIX_STRING);
    return i;
}

class RouterTest : public ::testing::Test {
  protected:
    void SetUp() override { ASSERT_TRUE(ProgressEngine::instance().acquire().ok()); }
    void TearDown() override { ProgressEngine::instance().release(); }

    // Routes data/dirs through `modules`; the host answers `host_status`.
    LogOutcome route(std::vector<std::shared_ptr<FakeChannel>> modules,
                     std::vector<pmix_info_t> data, std::vector<pmix_info_t> dirs = {},
                     pmix_status_t host_status = PMIX_SUCCESS, bool gateway = false) {
        std::vector<NamedModule> named;
        for (auto &m : modules)
            named.push_back({"plog_fake" + std::to_string(named.size()), m.get()});
        auto keep = std::make_shared<std::vector<std::shared_ptr<FakeChannel>>>(modules);
        auto call = std::make_shared<LogCall>();
        std::strcpy(call->source.nspace, "job");
        call->source.rank = 3;
        for (auto &d : data) call->data.adopt(d);
        for (auto &d : dirs) call->directives.adopt(d);
        call->gateway = gateway;
        std::promise<LogOutcome> result;
        auto future = result.get_future();
        ProgressEngine::instance().post([&, named, keep, call] {
            Router(named, keep)
                .log(
                    call,
                    [&](const pmix_info_t &entry, std::function<void(plog::EntryResult)> settled) {
                        journal.add("host", entry);
                        settled(plog::EntryResult(host_status));
                    },
                    [&](LogOutcome out) {
                        on_progress_thread = ProgressEngine::instance().on_thread();
                        result.set_value(std::move(out));
                    });
        });
        EXPECT_EQ(future.wait_for(std::chrono::seconds(10)), std::future_status::ready);
        return future.get();
    }

    Journal journal;
    bool on_progress_thread = false;
};

TEST_F(RouterTest, EachEntryGoesToTheModuleServingItsKeyAndTheRestToTheHost) {
    auto syslog = std::make_shared<FakeChannel>("syslog", PMIX_LOG_SYSLOG, PMIX_SUCCESS, journal);
    auto email = std::make_shared<FakeChannel>("email", PMIX_LOG_EMAIL, PMIX_SUCCESS, journal);
    auto out = route({syslog, email},
                     {string_info(PMIX_LOG_SYSLOG, "a"), string_info(PMIX_LOG_STDOUT, "b"),
                      string_info(PMIX_LOG_EMAIL, "c")});
    EXPECT_EQ(out.status, PMIX_SUCCESS);
    EXPECT_EQ(journal.attempts,
              (std::vector<std::string>{"syslog:pmix.log.syslog=a", "host:pmix.log.stdout=b",
                                        "email:pmix.log.email=c"}));
    ASSERT_EQ(out.entries.size(), 3u);
    EXPECT_EQ(out.entries[0].channel, "plog_fake0");
    EXPECT_EQ(out.entries[1].channel, "host");
    EXPECT_EQ(out.entries[2].channel, "plog_fake1");
    EXPECT_EQ(out.failures(), "");
    EXPECT_TRUE(on_progress_thread);
}

TEST_F(RouterTest, ADecliningModulePassesTheEntryToTheNextModuleThenToTheHost) {
    auto first = std::make_shared<FakeChannel>("first", PMIX_LOG_SYSLOG,
                                               pmixpp::mca::kStatusDeclined, journal);
    auto second = std::make_shared<FakeChannel>("second", PMIX_LOG_SYSLOG,
                                                pmixpp::mca::kStatusDeclined, journal);
    auto out = route({first, second}, {string_info(PMIX_LOG_SYSLOG, "x")});
    EXPECT_EQ(out.status, PMIX_SUCCESS);
    EXPECT_EQ(journal.attempts,
              (std::vector<std::string>{"first:pmix.log.syslog=x", "second:pmix.log.syslog=x",
                                        "host:pmix.log.syslog=x"}));
}

TEST_F(RouterTest, LogOnceTriesTheEntriesInTheCallersOrderUntilOneIsDelivered) {
    auto email = std::make_shared<FakeChannel>("email", PMIX_LOG_EMAIL, PMIX_ERR_UNREACH, journal);
    auto syslog = std::make_shared<FakeChannel>("syslog", PMIX_LOG_SYSLOG, PMIX_SUCCESS, journal);
    pmix_info_t once{};
    bool yes = true;
    PMIx_Info_load(&once, PMIX_LOG_ONCE, &yes, PMIX_BOOL);
    // Modules in priority order syslog, email; the caller's order wins.
    auto out = route({syslog, email},
                     {string_info(PMIX_LOG_EMAIL, "1"), string_info(PMIX_LOG_JOB_RECORD, "2"),
                      string_info(PMIX_LOG_SYSLOG, "3"), string_info(PMIX_LOG_STDERR, "4")},
                     {once}, PMIX_ERR_NOT_SUPPORTED);
    EXPECT_EQ(out.status, PMIX_SUCCESS);
    EXPECT_EQ(journal.attempts,
              (std::vector<std::string>{"email:pmix.log.email=1", "host:pmix.log.jrec=2",
                                        "syslog:pmix.log.syslog=3"}));
    EXPECT_FALSE(out.entries[3].attempted);
}

TEST_F(RouterTest, SomeDeliveredIsPartialSuccessAndTheFailedChannelIsNamed) {
    auto syslog = std::make_shared<FakeChannel>("syslog", PMIX_LOG_SYSLOG, PMIX_SUCCESS, journal);
    auto email = std::make_shared<FakeChannel>("email", PMIX_LOG_EMAIL, PMIX_ERR_UNREACH, journal);
    auto out = route({syslog, email},
                     {string_info(PMIX_LOG_SYSLOG, "a"), string_info(PMIX_LOG_EMAIL, "b")});
    EXPECT_EQ(out.status, PMIX_ERR_PARTIAL_SUCCESS);
    EXPECT_EQ(out.failures(), "pmix.log.email via plog_fake1: UNREACH (email says so)");
}

TEST_F(RouterTest, NothingDeliveredIsTheCommonErrorOrPmixErrorWhenTheyDiffer) {
    auto a = std::make_shared<FakeChannel>("a", PMIX_LOG_SYSLOG, PMIX_ERR_UNREACH, journal);
    auto b = std::make_shared<FakeChannel>("b", PMIX_LOG_EMAIL, PMIX_ERR_UNREACH, journal);
    EXPECT_EQ(
        route({a, b}, {string_info(PMIX_LOG_SYSLOG, "1"), string_info(PMIX_LOG_EMAIL, "2")}).status,
        PMIX_ERR_UNREACH);
    auto c = std::make_shared<FakeChannel>("c", PMIX_LOG_EMAIL, PMIX_ERR_TIMEOUT, journal);
    EXPECT_EQ(
        route({a, c}, {string_info(PMIX_LOG_SYSLOG, "1"), string_info(PMIX_LOG_EMAIL, "2")}).status,
        PMIX_ERROR);
}

TEST_F(RouterTest, CompletionsFromAnotherThreadAreTakenUpOnTheProgressThread) {
    auto email = std::make_shared<FakeChannel>("email", PMIX_LOG_EMAIL, PMIX_SUCCESS, journal,
                                               /*from_thread=*/true);
    auto out = route({email}, {string_info(PMIX_LOG_EMAIL, "a"), string_info(PMIX_LOG_EMAIL, "b")});
    EXPECT_EQ(out.status, PMIX_SUCCESS);
    EXPECT_TRUE(on_progress_thread);
    EXPECT_EQ(journal.attempts.size(), 2u);
}

TEST_F(RouterTest, ModulesSeeTheGatewayDirectiveOnlyOnAGateway) {
    auto syslog = std::make_shared<FakeChannel>("syslog", PMIX_LOG_SYSLOG, PMIX_SUCCESS, journal);
    route({syslog}, {string_info(PMIX_LOG_SYSLOG, "a")});
    EXPECT_FALSE(syslog->saw_gateway);
    route({syslog}, {string_info(PMIX_LOG_SYSLOG, "a")}, {}, PMIX_SUCCESS, /*gateway=*/true);
    EXPECT_TRUE(syslog->saw_gateway);
}

}  // namespace
