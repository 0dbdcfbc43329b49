#include "heartbeat_sensor.hpp"

#include <cstring>
#include <string>

#include "pmixpp/mca/info.hpp"

namespace pmixpp::psensor_heartbeat {

namespace {

std::pair<std::string, pmix_rank_t> proc_key(const pmix_proc_t &p) {
    return {std::string(p.nspace, strnlen(p.nspace, sizeof(p.nspace))), p.rank};
}

std::string describe(const std::pair<std::string, pmix_rank_t> &p) {
    return p.first + ":" + std::to_string(p.second);
}

}  // namespace

HeartbeatSensor::~HeartbeatSensor() {
    for (auto &[proc, mine] : watches_) {
        for (auto &[id, w] : mine) {
            if (timers_ != nullptr) timers_->cancel(w.timer);
        }
    }
}

std::vector<std::string> HeartbeatSensor::monitor_keys() const {
    return {PMIX_MONITOR_HEARTBEAT};
}

mca::Status HeartbeatSensor::start(const mca::psensor::MonitorRequest &request,
                                   mca::ProgressTimers &timers,
                                   mca::psensor::ViolationHandler raise) {
    if (mca::info_key(request.monitor) != PMIX_MONITOR_HEARTBEAT) {
        return mca::Status(mca::kStatusDeclined, "not a heartbeat monitor");
    }
    const pmix_info_t *t = mca::find_info(request.directives, PMIX_MONITOR_HEARTBEAT_TIME);
    const auto period = t == nullptr ? std::nullopt : mca::as_u32(t->value);
    if (!period || *period == 0) {
        return mca::Status(PMIX_ERR_BAD_PARAM,
                           "psensor_heartbeat: PMIX_MONITOR_HEARTBEAT_TIME must be a positive "
                           "number of seconds");
    }
    std::uint32_t drops = default_drops_;
    if (const pmix_info_t *d = mca::find_info(request.directives, PMIX_MONITOR_HEARTBEAT_DROPS)) {
        auto n = mca::as_u32(d->value);
        if (!n) {
            return mca::Status(PMIX_ERR_BAD_PARAM,
                               "psensor_heartbeat: PMIX_MONITOR_HEARTBEAT_DROPS must be a "
                               "non-negative count");
        }
        drops = *n;
    }
    const Proc proc = proc_key(request.requestor);
    auto &mine = watches_[proc];
    const std::string id(request.id);
    if (mine.count(id) != 0) {
        return mca::Status(PMIX_ERR_EXISTS, "psensor_heartbeat: monitor id '" + id +
                                                "' already used by " + describe(proc));
    }
    timers_ = &timers;
    raise_ = std::move(raise);
    Watch w;
    w.period_s = *period;
    w.drops = drops;
    w.code = request.event_code;
    w.timer = timers.every(std::chrono::seconds(*period), [this, proc, id] { tick(proc, id); });
    mine.emplace(id, w);
    return mca::Status::success();
}

void HeartbeatSensor::tick(const Proc &proc, const std::string &id) {
    auto p = watches_.find(proc);
    if (p == watches_.end()) return;
    auto it = p->second.find(id);
    if (it == p->second.end()) return;
    Watch &w = it->second;
    if (w.beat) {
        w.beat = false;
        w.misses = 0;
        return;
    }
    ++w.misses;
    if (w.stalled || w.misses <= w.drops) return;
    w.stalled = true;
    mca::psensor::Violation v;
    std::memset(&v.requestor, 0, sizeof(v.requestor));
    std::memcpy(v.requestor.nspace, proc.first.data(),
                std::min(proc.first.size(), sizeof(v.requestor.nspace) - 1));
    v.requestor.rank = proc.second;
    v.id = id;
    v.event_code = w.code;
    v.reason = "no heartbeat from " + describe(proc) + " for " +
               std::to_string(static_cast<std::uint64_t>(w.misses) * w.period_s) + " s (" +
               std::to_string(w.misses) + " window(s) of " + std::to_string(w.period_s) +
               " s missed, " + std::to_string(w.drops) + " tolerated)";
    if (raise_) raise_(v);
}

void HeartbeatSensor::heartbeat(const pmix_proc_t &from) {
    auto p = watches_.find(proc_key(from));
    if (p == watches_.end()) return;
    for (auto &[id, w] : p->second) {
        w.beat = true;
        if (w.stalled) {  // re-armed: a new stall alerts again
            w.stalled = false;
            w.misses = 0;
        }
    }
}

mca::Status HeartbeatSensor::stop(const pmix_proc_t &requestor, std::string_view id) {
    auto p = watches_.find(proc_key(requestor));
    if (p == watches_.end()) {
        return mca::Status(PMIX_ERR_NOT_FOUND, "psensor_heartbeat: nothing watched");
    }
    auto &mine = p->second;
    if (id.empty()) {
        for (auto &[i, w] : mine) timers_->cancel(w.timer);
        watches_.erase(p);
        return mca::Status::success();
    }
    auto it = mine.find(id);
    if (it == mine.end()) {
        return mca::Status(PMIX_ERR_NOT_FOUND,
                           "psensor_heartbeat: no monitor '" + std::string(id) + "'");
    }
    timers_->cancel(it->second.timer);
    mine.erase(it);
    if (mine.empty()) watches_.erase(p);
    return mca::Status::success();
}

std::size_t HeartbeatSensor::size() const {
    std::size_t n = 0;
    for (const auto &[proc, mine] : watches_) n += mine.size();
    return n;
}

}  // namespace pmixpp::psensor_heartbeat
