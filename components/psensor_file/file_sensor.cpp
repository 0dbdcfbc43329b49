#include "file_sensor.hpp"

#include <algorithm>
#include <cstring>

#include "pmixpp/mca/info.hpp"

namespace pmixpp::psensor_file {

namespace {

using mca::Status;

std::pair<std::string, pmix_rank_t> proc_key(const pmix_proc_t &p) {
    return {std::string(p.nspace, strnlen(p.nspace, sizeof(p.nspace))), p.rank};
}

std::string describe(const std::pair<std::string, pmix_rank_t> &p) {
    return p.first + ":" + std::to_string(p.second);
}

Status bad(const std::string &why) {
    return Status(PMIX_ERR_BAD_PARAM, "psensor_file: " + why);
}

bool flag_set(std::span<const pmix_info_t> infos, const char *key) {
    const pmix_info_t *i = mca::find_info(infos, key);
    if (i == nullptr) return false;
    // Set unless explicitly false (4.2's RFC typed _ACCESS/_MODIFY as strings).
    return i->value.type != PMIX_BOOL || i->value.data.flag;
}

Criteria criteria_among(std::span<const pmix_info_t> infos) {
    Criteria c;
    c.size = flag_set(infos, PMIX_MONITOR_FILE_SIZE);
    c.access = flag_set(infos, PMIX_MONITOR_FILE_ACCESS);
    c.modify = flag_set(infos, PMIX_MONITOR_FILE_MODIFY);
    if (!c.any()) c = Criteria{true, true, true};  // none named: all of them
    return c;
}

// The files and criteria of a request, or why it cannot be served.
struct Parsed {
    std::vector<std::string> files;
    Criteria criteria;
};

mca::Result<Parsed> parse(const mca::psensor::MonitorRequest &request) {
    Parsed p;
    const std::string_view key = mca::info_key(request.monitor);
    const pmix_value_t &v = request.monitor.value;
    if (key == PMIX_MONITOR_FILE) {
        if (v.type != PMIX_STRING || v.data.string == nullptr || v.data.string[0] == '\0') {
            return bad("PMIX_MONITOR_FILE needs the file's name");
        }
        p.files.emplace_back(v.data.string);
        p.criteria = criteria_among(request.directives);
        return p;
    }
    // The standard's PMIX_MONITOR_FILE_CHANGES: criteria in the monitor's value.
    if (v.type == PMIX_DATA_ARRAY && v.data.darray != nullptr && v.data.darray->size > 0) {
        const pmix_data_array_t &a = *v.data.darray;
        if (a.type != PMIX_INFO || a.array == nullptr) {
            return bad("PMIX_MONITOR_FILE_CHANGES takes an array of pmix_info_t (the criteria)");
        }
        p.criteria = criteria_among({static_cast<const pmix_info_t *>(a.array), a.size});
    } else {
        p.criteria = Criteria{true, true, true};
    }
    const pmix_info_t *t = mca::find_info(request.directives, mca::psensor::kMonitorTargetFiles);
    if (t != nullptr && t->value.type == PMIX_STRING && t->value.data.string != nullptr &&
        t->value.data.string[0] != '\0') {
        p.files.emplace_back(t->value.data.string);
    } else if (t != nullptr && t->value.type == PMIX_DATA_ARRAY && t->value.data.darray &&
               t->value.data.darray->type == PMIX_STRING && t->value.data.darray->array) {
        auto **names = static_cast<char **>(t->value.data.darray->array);
        for (std::size_t n = 0; n < t->value.data.darray->size; ++n) {
            if (names[n] == nullptr || names[n][0] == '\0') return bad("an empty file name");
            p.files.emplace_back(names[n]);
        }
    }
    if (p.files.empty()) {
        return bad("PMIX_MONITOR_FILE_CHANGES needs PMIX_MONITOR_TARGET_FILES");
    }
    return p;
}

mca::Result<std::uint32_t> count(std::span<const pmix_info_t> d, const char *key,
                                 std::uint32_t fallback) {
    const pmix_info_t *i = mca::find_info(d, key);
    if (i == nullptr) return fallback;
    auto n = mca::as_u32(i->value);
    if (!n) return bad(std::string(key) + " must be a non-negative integer");
    return *n;
}

}  // namespace

FileSensor::FileSensor(std::uint32_t default_check_s, std::uint32_t default_drops,
                       std::unique_ptr<Prober> prober)
    : default_check_s_(std::max<std::uint32_t>(default_check_s, 1)),
      default_drops_(default_drops),
      prober_(std::move(prober)) {}

FileSensor::~FileSensor() {
    for (auto &[proc, mine] : monitors_) {
        for (auto &[id, m] : mine) {
            if (timers_ != nullptr) timers_->cancel(m.timer);
        }
    }
}

std::vector<std::string> FileSensor::monitor_keys() const {
    return {PMIX_MONITOR_FILE, mca::psensor::kMonitorFileChanges};
}

mca::Status FileSensor::start(const mca::psensor::MonitorRequest &request,
                              mca::ProgressTimers &timers, mca::psensor::ViolationHandler raise) {
    const std::string_view key = mca::info_key(request.monitor);
    if (key != PMIX_MONITOR_FILE && key != mca::psensor::kMonitorFileChanges) {
        return Status(mca::kStatusDeclined, "not a file monitor");
    }
    auto parsed = parse(request);
    if (!parsed) return parsed.status();
    auto period = count(request.directives, PMIX_MONITOR_FILE_CHECK_TIME, default_check_s_);
    if (!period) return period.status();
    if (period.value() == 0) return bad("PMIX_MONITOR_FILE_CHECK_TIME must be positive");
    auto drops = count(request.directives, PMIX_MONITOR_FILE_DROPS, default_drops_);
    if (!drops) return drops.status();

    const Proc proc = proc_key(request.requestor);
    auto &mine = monitors_[proc];
    const std::string id(request.id);
    if (mine.count(id) != 0) {
        return Status(PMIX_ERR_EXISTS,
                      "psensor_file: monitor id '" + id + "' already used by " + describe(proc));
    }
    timers_ = &timers;
    raise_ = std::move(raise);
    Monitor m;
    m.period_s = period.value();
    m.code = request.event_code;
    for (const auto &f : parsed.value().files) {
        Watched w{std::make_shared<Probe>(f), FileWatch(parsed.value().criteria, drops.value())};
        prober_->request(w.probe);  // the baseline, judged at the first check
        m.files.push_back(std::move(w));
    }
    m.timer = timers.every(std::chrono::seconds(m.period_s), [this, proc, id] { check(proc, id); });
    mine.emplace(id, std::move(m));
    return Status::success();
}

void FileSensor::check(const Proc &proc, const std::string &id) {
    auto p = monitors_.find(proc);
    if (p == monitors_.end()) return;
    auto it = p->second.find(id);
    if (it == p->second.end()) return;
    Monitor &m = it->second;
    std::vector<mca::psensor::Violation> alerts;
    for (auto &w : m.files) {
        auto [ready, sample] = w.probe->take();
        if (ready) {
            if (w.watch.observe(sample)) {
                mca::psensor::Violation v;
                std::memset(&v.requestor, 0, sizeof(v.requestor));
                std::memcpy(v.requestor.nspace, proc.first.data(),
                            std::min(proc.first.size(), sizeof(v.requestor.nspace) - 1));
                v.requestor.rank = proc.second;
                v.id = id;
                v.event_code = m.code;
                v.file = w.probe->path();
                v.reason = "file " + v.file + " of " + describe(proc) +
                           (sample ? " showed no change (" + w.watch.criteria().describe() + ")"
                                   : " is missing") +
                           " in " + std::to_string(w.watch.misses()) + " check(s) of " +
                           std::to_string(m.period_s) + " s (" + std::to_string(w.watch.drops()) +
                           " tolerated)";
                alerts.push_back(std::move(v));
            }
        }
        // A stat still running (slow filesystem): no verdict, no second stat.
        if (!w.probe->pending()) prober_->request(w.probe);
    }
    for (const auto &v : alerts) {
        if (raise_) raise_(v);
    }
}

mca::Status FileSensor::stop(const pmix_proc_t &requestor, std::string_view id) {
    auto p = monitors_.find(proc_key(requestor));
    if (p == monitors_.end()) return Status(PMIX_ERR_NOT_FOUND, "psensor_file: nothing watched");
    auto &mine = p->second;
    if (id.empty()) {
        for (auto &[i, m] : mine) timers_->cancel(m.timer);
        monitors_.erase(p);
        return Status::success();
    }
    auto it = mine.find(id);
    if (it == mine.end()) {
        return Status(PMIX_ERR_NOT_FOUND, "psensor_file: no monitor '" + std::string(id) + "'");
    }
    timers_->cancel(it->second.timer);
    mine.erase(it);
    if (mine.empty()) monitors_.erase(p);
    return Status::success();
}

std::size_t FileSensor::size() const {
    std::size_t n = 0;
    for (const auto &[proc, mine] : monitors_) n += mine.size();
    return n;
}

}  // namespace pmixpp::psensor_file
