// psensor: each monitor request is offered to every module in turn; the first
// that does not decline owns it. Violations are raised through the handler the
// core gave at start(); periodic checks run on the core's timers.
#include "pmixpp/mca/psensor.hpp"

#include "pmix_values.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace psensor = pmixpp::mca::psensor;
using pmixpp::mca::kStatusDeclined;
using pmixpp::mca::ProgressTimers;
using pmixpp::mca::Status;
using pmixpp::test::make_info_string;
using pmixpp::test::make_info_u32;
using pmixpp::test::make_proc;
using pmixpp::test::same_proc;
using namespace std::chrono_literals;

// Timers driven by the test instead of a clock.
class ManualTimers final : public ProgressTimers {
  public:
    TimerId every(std::chrono::milliseconds period, std::function<void()> tick) override {
        timers_[++last_id_] = {period, now_ + period, std::move(tick)};
        return last_id_;
    }
    void cancel(TimerId id) override { timers_.erase(id); }

    void advance(std::chrono::milliseconds by) {
        const auto until = now_ + by;
        for (;;) {
            auto next = std::min_element(
                timers_.begin(), timers_.end(),
                [](const auto &a, const auto &b) { return a.second.due < b.second.due; });
            if (next == timers_.end() || next->second.due > until) break;
            now_ = next->second.due;
            next->second.due += next->second.period;
            auto tick = next->second.tick;  // the tick may cancel its own timer
            tick();
        }
        now_ = until;
    }
    std::size_t active() const { return timers_.size(); }

  private:
    struct Timer {
        std::chrono::milliseconds period;
        std::chrono::milliseconds due;
        std::function<void()> tick;
    };
    std::map<TimerId, Timer> timers_;
    TimerId last_id_ = 0;
    std::chrono::milliseconds now_{0};
};

std::uint32_t directive_u32(std::span<const pmix_info_t> directives, std::string_view key,
                            std::uint32_t fallback) {
    for (const auto &info : directives) {
        if (key == info.key && info.value.type == PMIX_UINT32) return info.value.data.uint32;
    }
    return fallback;
}

// Raises a violation when a whole period passes without a heartbeat.
class HeartbeatSensor final : public psensor::Module {
  public:
    ~HeartbeatSensor() override {
        for (auto &watch : watches_) {
            if (watch.timer != 0) timers_->cancel(watch.timer);
        }
    }

    std::vector<std::string> monitor_keys() const override { return {PMIX_MONITOR_HEARTBEAT}; }

    Status start(const psensor::MonitorRequest &request, ProgressTimers &timers,
                 psensor::ViolationHandler raise) override {
        const auto seconds = directive_u32(request.directives, PMIX_MONITOR_HEARTBEAT_TIME, 0);
        if (seconds == 0)
            return Status(PMIX_ERR_BAD_PARAM, "PMIX_MONITOR_HEARTBEAT_TIME must be > 0");
        timers_ = &timers;
        auto &watch = watches_.emplace_back(
            Watch{request.requestor, std::string(request.id), request.event_code, false, 0});
        const std::size_t index = watches_.size() - 1;
        watch.timer = timers.every(std::chrono::seconds(seconds), [this, index, raise] {
            Watch &w = watches_[index];
            if (!w.beat) raise({w.proc, w.id, w.event_code, "no heartbeat within the period", ""});
            w.beat = false;
        });
        return Status::success();
    }

    Status stop(const pmix_proc_t &requestor, std::string_view id) override {
        bool stopped = false;
        for (auto &watch : watches_) {
            if (watch.timer != 0 && same_proc(watch.proc, requestor) &&
                (id.empty() || id == watch.id)) {
                timers_->cancel(watch.timer);
                watch.timer = 0;
                stopped = true;
            }
        }
        return stopped ? Status::success() : Status(PMIX_ERR_NOT_FOUND, "");
    }

    void heartbeat(const pmix_proc_t &from) override {
        for (auto &watch : watches_) {
            if (same_proc(watch.proc, from)) watch.beat = true;
        }
    }

  private:
    struct Watch {
        pmix_proc_t proc;
        std::string id;
        pmix_status_t event_code;
        bool beat;
        ProgressTimers::TimerId timer;
    };
    std::vector<Watch> watches_;
    ProgressTimers *timers_ = nullptr;
};

// Understands file monitors but (in this test) only files under /var/run/:
// declines the others so that a later module may take them.
class FileSensor final : public psensor::Module {
  public:
    std::vector<std::string> monitor_keys() const override { return {PMIX_MONITOR_FILE}; }
    Status start(const psensor::MonitorRequest &request, ProgressTimers &,
                 psensor::ViolationHandler) override {
        const std::string_view path = request.monitor.value.data.string;
        if (!path.starts_with("/var/run/")) return Status(kStatusDeclined, "");
        ++started;
        return Status::success();
    }
    Status stop(const pmix_proc_t &, std::string_view) override {
        return Status(PMIX_ERR_NOT_FOUND, "");
    }
    int started = 0;
};

// The framework base's policy, as the README states it.
struct Offer {
    Status status;
    psensor::Module *owner = nullptr;
};
Offer offer(const std::vector<std::unique_ptr<psensor::Module>> &modules,
            const psensor::MonitorRequest &request, ProgressTimers &timers,
            const psensor::ViolationHandler &raise) {
    for (const auto &module : modules) {
        if (!module->accepts(request)) continue;
        Status status = module->start(request, timers, raise);
        if (status.code() == kStatusDeclined) continue;
        return {status, status.ok() ? module.get() : nullptr};
    }
    return {Status(PMIX_ERR_NOT_SUPPORTED, "no psensor module takes this request"), nullptr};
}

const pmix_proc_t kClient = make_proc("job1", 3);

TEST(PsensorModule, DefaultAcceptsTakesOnlyRequestsForItsMonitorKeys) {
    const std::unique_ptr<psensor::Module> module = std::make_unique<HeartbeatSensor>();
    const pmix_info_t heartbeat = make_info_string(PMIX_MONITOR_HEARTBEAT, "");
    const pmix_info_t file = make_info_string(PMIX_MONITOR_FILE, "/tmp/canary");
    EXPECT_TRUE(module->accepts({kClient, "hb", heartbeat, PMIX_MONITOR_HEARTBEAT_ALERT, {}}));
    EXPECT_FALSE(module->accepts({kClient, "f", file, PMIX_MONITOR_FILE_ALERT, {}}));
}

TEST(PsensorModule, ARequestBelongsToTheFirstModuleThatDoesNotDecline) {
    ManualTimers timers;
    std::vector<std::unique_ptr<psensor::Module>> modules;
    modules.push_back(std::make_unique<FileSensor>());
    modules.push_back(std::make_unique<FileSensor>());
    auto &first = static_cast<FileSensor &>(*modules[0]);
    auto &second = static_cast<FileSensor &>(*modules[1]);

    const pmix_info_t run_file = make_info_string(PMIX_MONITOR_FILE, "/var/run/app.pid");
    const Offer taken =
        offer(modules, {kClient, "f1", run_file, PMIX_MONITOR_FILE_ALERT, {}}, timers, {});
    EXPECT_TRUE(taken.status.ok());
    EXPECT_EQ(taken.owner, modules[0].get());
    EXPECT_EQ(first.started, 1);
    EXPECT_EQ(second.started, 0);

    const pmix_info_t tmp_file = make_info_string(PMIX_MONITOR_FILE, "/tmp/canary");
    const Offer declined =
        offer(modules, {kClient, "f2", tmp_file, PMIX_MONITOR_FILE_ALERT, {}}, timers, {});
    EXPECT_EQ(declined.status.code(), PMIX_ERR_NOT_SUPPORTED);
    EXPECT_EQ(declined.owner, nullptr);
}

TEST(PsensorModule, AModuleThatRefusesItsOwnKindStopsTheOfferWithItsReason) {
    ManualTimers timers;
    std::vector<std::unique_ptr<psensor::Module>> modules;
    modules.push_back(std::make_unique<HeartbeatSensor>());
    const pmix_info_t heartbeat = make_info_string(PMIX_MONITOR_HEARTBEAT, "");
    const Offer refused =
        offer(modules, {kClient, "hb", heartbeat, PMIX_MONITOR_HEARTBEAT_ALERT, {}}, timers, {});
    EXPECT_EQ(refused.status.code(), PMIX_ERR_BAD_PARAM);
    EXPECT_NE(refused.status.message().find("PMIX_MONITOR_HEARTBEAT_TIME"), std::string::npos);
    EXPECT_EQ(timers.active(), 0u);
}

TEST(PsensorModule, MissedHeartbeatRaisesTheRequestedEventUntilStopped) {
    ManualTimers timers;  // outlives the module, as the core's timers do
    const std::unique_ptr<psensor::Module> module = std::make_unique<HeartbeatSensor>();
    std::vector<psensor::Violation> raised;
    const pmix_info_t heartbeat = make_info_string(PMIX_MONITOR_HEARTBEAT, "");
    const pmix_info_t directives[] = {make_info_u32(PMIX_MONITOR_HEARTBEAT_TIME, 5)};
    const Status started =
        module->start({kClient, "hb", heartbeat, PMIX_MONITOR_HEARTBEAT_ALERT, directives}, timers,
                      [&](const psensor::Violation &v) { raised.push_back(v); });
    ASSERT_TRUE(started.ok()) << started.message();

    module->heartbeat(kClient);
    timers.advance(5s);
    EXPECT_TRUE(raised.empty()) << "a heartbeat arrived within the period";

    timers.advance(5s);
    ASSERT_EQ(raised.size(), 1u);
    EXPECT_TRUE(same_proc(raised[0].requestor, kClient));
    EXPECT_EQ(raised[0].id, "hb");
    EXPECT_EQ(raised[0].event_code, PMIX_MONITOR_HEARTBEAT_ALERT);

    EXPECT_TRUE(module->stop(kClient, "hb").ok());
    timers.advance(60s);
    EXPECT_EQ(raised.size(), 1u) << "no violation after stop()";
    EXPECT_EQ(timers.active(), 0u);
}

TEST(PsensorModule, StopOfSomethingNotWatchedIsNotFound) {
    const std::unique_ptr<psensor::Module> module = std::make_unique<HeartbeatSensor>();
    EXPECT_EQ(module->stop(kClient, "").code(), PMIX_ERR_NOT_FOUND);
}

TEST(PsensorModule, DefaultHeartbeatIsIgnoredByModulesThatDoNotUseIt) {
    std::unique_ptr<psensor::Module> module = std::make_unique<FileSensor>();
    module->heartbeat(kClient);  // the default: nothing happens
    EXPECT_EQ(static_cast<FileSensor &>(*module).started, 0);
    EXPECT_EQ(module->stop(kClient, "").code(), PMIX_ERR_NOT_FOUND);
}

}  // namespace
