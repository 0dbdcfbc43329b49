// plog: a module serves channels; log() completes once, with one status per
// entry, inline or later from another thread.
#include "pmixpp/mca/plog.hpp"

#include "pmix_values.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace plog = pmixpp::mca::plog;
using pmixpp::test::make_info_string;
using pmixpp::test::make_proc;

// Completes inline: writes each entry's string to an in-memory "syslog".
class MemorySyslog final : public plog::Module {
  public:
    std::vector<std::string> channels() const override {
        return {PMIX_LOG_SYSLOG, PMIX_LOG_LOCAL_SYSLOG};
    }
    void log(const pmix_proc_t &source, std::span<const pmix_info_t> entries,
             std::span<const pmix_info_t> directives, plog::LogCompletion done) override {
        (void)directives;
        std::vector<plog::EntryResult> statuses;
        for (const pmix_info_t &entry : entries) {
            if (entry.value.type != PMIX_STRING) {
                statuses.push_back(PMIX_ERR_BAD_PARAM);
                continue;
            }
            lines.push_back(std::string(source.nspace) + ": " + entry.value.data.string);
            statuses.push_back(PMIX_SUCCESS);
        }
        done(std::move(statuses));
    }
    std::vector<std::string> lines;
};

// Completes later, from its own thread, like an SMTP client would.
class BackgroundMailer final : public plog::Module {
  public:
    ~BackgroundMailer() override {
        if (worker_.joinable()) worker_.join();
    }
    std::vector<std::string> channels() const override { return {PMIX_LOG_EMAIL}; }
    void log(const pmix_proc_t &, std::span<const pmix_info_t> entries,
             std::span<const pmix_info_t>, plog::LogCompletion done) override {
        // Copy what the worker needs: the entries are borrowed for this call only.
        std::vector<std::string> messages;
        for (const pmix_info_t &entry : entries) {
            messages.emplace_back(entry.value.type == PMIX_STRING ? entry.value.data.string : "");
        }
        worker_ = std::thread([messages = std::move(messages), done = std::move(done)] {
            std::vector<plog::EntryResult> statuses;
            for (const auto &message : messages) {
                statuses.push_back(message.empty() ? PMIX_ERR_BAD_PARAM : PMIX_SUCCESS);
            }
            done(std::move(statuses));
        });
    }

  private:
    std::thread worker_;
};

const pmix_proc_t kSource = make_proc("job1", 0);

TEST(PlogModule, DefaultServesExactlyTheChannelsItDeclares) {
    const std::unique_ptr<plog::Module> module = std::make_unique<MemorySyslog>();
    EXPECT_TRUE(module->serves(PMIX_LOG_SYSLOG));
    EXPECT_TRUE(module->serves(PMIX_LOG_LOCAL_SYSLOG));
    EXPECT_FALSE(module->serves(PMIX_LOG_GLOBAL_SYSLOG));
    EXPECT_FALSE(module->serves(PMIX_LOG_EMAIL));
    EXPECT_FALSE(module->serves(""));
}

TEST(PlogModule, InlineCompletionReportsOneStatusPerEntryInOrder) {
    const std::unique_ptr<plog::Module> module = std::make_unique<MemorySyslog>();
    pmix_info_t not_a_string = make_info_string(PMIX_LOG_SYSLOG, "");
    not_a_string.value.type = PMIX_UINT32;
    const pmix_info_t entries[] = {make_info_string(PMIX_LOG_SYSLOG, "node n01 rebooted"),
                                   not_a_string, make_info_string(PMIX_LOG_LOCAL_SYSLOG, "done")};
    int calls = 0;
    std::vector<plog::EntryResult> statuses;
    module->log(kSource, entries, {}, [&](std::vector<plog::EntryResult> per_entry) {
        ++calls;
        statuses = std::move(per_entry);
    });
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(statuses,
              (std::vector<plog::EntryResult>{PMIX_SUCCESS, PMIX_ERR_BAD_PARAM, PMIX_SUCCESS}));
    EXPECT_EQ(static_cast<MemorySyslog &>(*module).lines,
              (std::vector<std::string>{"job1: node n01 rebooted", "job1: done"}));
}

TEST(PlogModule, AsynchronousCompletionArrivesOnceFromAnotherThreadAfterTheEntriesAreGone) {
    const std::unique_ptr<plog::Module> module = std::make_unique<BackgroundMailer>();
    std::promise<std::vector<plog::EntryResult>> completed;
    auto result = completed.get_future();
    std::thread::id completing_thread;
    {
        std::string body = "job1 finished";
        const pmix_info_t entries[] = {make_info_string(PMIX_LOG_EMAIL, body.c_str()),
                                       make_info_string(PMIX_LOG_EMAIL, "")};
        module->log(kSource, entries, {}, [&](std::vector<plog::EntryResult> per_entry) {
            completing_thread = std::this_thread::get_id();
            completed.set_value(std::move(per_entry));  // a second call would throw
        });
        body.assign(body.size(), 'x');  // the module must not read borrowed entries any more
    }
    ASSERT_EQ(result.wait_for(std::chrono::seconds(5)), std::future_status::ready);
    EXPECT_EQ(result.get(), (std::vector<plog::EntryResult>{PMIX_SUCCESS, PMIX_ERR_BAD_PARAM}));
    EXPECT_NE(completing_thread, std::this_thread::get_id());
}

}  // namespace
