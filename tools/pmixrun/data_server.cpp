#include "data_server.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace pmixrun {
namespace {

using Clock = std::chrono::steady_clock;

std::string nspace_of(const pmix_proc_t &p) {
    return std::string(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN));
}
bool same_proc(const pmix_proc_t &a, const pmix_proc_t &b) {
    return a.rank == b.rank && nspace_of(a) == nspace_of(b);
}

struct Entry {
    std::string key;
    pmix_proc_t publisher{};
    pmix_value_t value{};  // owned (PMIx_Value_xfer copy)
    pmix_data_range_t range = PMIX_RANGE_SESSION;
    pmix_persistence_t persist = PMIX_PERSIST_APP;
};

struct Waiter {
    pmix_proc_t requester{};
    std::vector<std::string> keys;
    pmix_data_range_t range = PMIX_RANGE_SESSION;
    std::size_t need = 0;  // keys that must be found before answering
    std::optional<Clock::time_point> deadline;
    pmix_lookup_cbfunc_t cbfunc = nullptr;
    void *cbdata = nullptr;
};

// An answer to deliver once the mutex is released.
struct Delivery {
    pmix_status_t status = PMIX_ERR_NOT_FOUND;
    std::vector<pmix_pdata_t> data;  // values owned
    pmix_lookup_cbfunc_t cbfunc = nullptr;
    void *cbdata = nullptr;
};

std::mutex g_mutex;
std::list<Entry> g_entries;
std::list<Waiter> g_waiters;
std::condition_variable g_wake;  // a waiter with a deadline arrived, or stop
bool g_stop = false;
std::thread g_timer;

// Whether `entry` may be returned to `requester` looking in `range`.
bool visible(const Entry &e, const pmix_proc_t &requester, pmix_data_range_t range) {
    auto within = [](pmix_data_range_t r, const pmix_proc_t &a, const pmix_proc_t &b) {
        if (r == PMIX_RANGE_PROC_LOCAL) return same_proc(a, b);
        if (r == PMIX_RANGE_NAMESPACE) return nspace_of(a) == nspace_of(b);
        return true;  // one node, one session
    };
    return within(range, requester, e.publisher) && within(e.range, e.publisher, requester);
}

// The domain in which a key must be unique.
std::string domain_of(const Entry &e) {
    std::string d = std::to_string(e.range);
    if (e.range == PMIX_RANGE_NAMESPACE) d += ":" + nspace_of(e.publisher);
    if (e.range == PMIX_RANGE_PROC_LOCAL)
        d += ":" + nspace_of(e.publisher) + ":" + std::to_string(e.publisher.rank);
    return d;
}

void release(Delivery &d) {
    for (auto &p : d.data) PMIx_Value_destruct(&p.value);
}

void deliver(std::vector<Delivery> &ds) {
    for (auto &d : ds) {
        d.cbfunc(d.status, d.data.empty() ? nullptr : d.data.data(), d.data.size(), d.cbdata);
        release(d);
    }
}

// Answers `w` if it can be (or must be: `final`). Caller holds g_mutex.
bool try_answer(const Waiter &w, bool final, pmix_status_t final_status,
                std::vector<Delivery> &out) {
    std::vector<std::list<Entry>::iterator> hits;
    for (const auto &k : w.keys) {
        for (auto it = g_entries.begin(); it != g_entries.end(); ++it) {
            if (it->key == k && visible(*it, w.requester, w.range)) {
                hits.push_back(it);
                break;
            }
        }
    }
    if (!final && hits.size() < w.need) return false;
    Delivery d;
    d.cbfunc = w.cbfunc;
    d.cbdata = w.cbdata;
    if (hits.empty()) {
        d.status = final ? final_status : PMIX_ERR_NOT_FOUND;
    } else {
        d.status = hits.size() == w.keys.size() ? PMIX_SUCCESS : PMIX_ERR_PARTIAL_SUCCESS;
        if (final && final_status == PMIX_ERR_TIMEOUT && hits.size() < w.need)
            d.status = PMIX_ERR_TIMEOUT;
    }
    if (d.status == PMIX_SUCCESS || d.status == PMIX_ERR_PARTIAL_SUCCESS) {
        for (auto it : hits) {
            pmix_pdata_t p;
            std::memset(&p, 0, sizeof p);
            p.proc = it->publisher;
            std::strncpy(p.key, it->key.c_str(), PMIX_MAX_KEYLEN);
            PMIx_Value_xfer(&p.value, &it->value);
            d.data.push_back(p);
        }
        std::sort(hits.begin(), hits.end(), [](auto a, auto b) { return &*a < &*b; });
        hits.erase(std::unique(hits.begin(), hits.end()), hits.end());
        for (auto it : hits) {
            if (it->persist == PMIX_PERSIST_FIRST_READ) {
                PMIx_Value_destruct(&it->value);
                g_entries.erase(it);
            }
        }
    }
    out.push_back(std::move(d));
    return true;
}

// Re-examines every waiting lookup after a publish. Caller holds g_mutex.
void release_waiters(std::vector<Delivery> &out) {
    for (auto it = g_waiters.begin(); it != g_waiters.end();) {
        it = try_answer(*it, false, PMIX_SUCCESS, out) ? g_waiters.erase(it) : std::next(it);
    }
}

void erase_entries(const std::function<bool(const Entry &)> &pred) {
    for (auto it = g_entries.begin(); it != g_entries.end();) {
        if (pred(*it)) {
            PMIx_Value_destruct(&it->value);
            it = g_entries.erase(it);
        } else {
            ++it;
        }
    }
}

bool is_directive(const pmix_info_t &i) {
    for (const char *k : {PMIX_RANGE, PMIX_PERSISTENCE, PMIX_TIMEOUT, PMIX_USERID, PMIX_GRPID,
                          PMIX_ACCESS_PERMISSIONS, PMIX_WAIT}) {
        if (PMIX_CHECK_KEY(&i, k)) return true;
    }
    return false;
}

std::optional<pmix_data_range_t> range_of(const pmix_info_t info[], size_t ninfo) {
    for (size_t i = 0; info != nullptr && i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_RANGE) && info[i].value.type == PMIX_DATA_RANGE)
            return info[i].value.data.range;
    }
    return std::nullopt;
}

pmix_status_t on_publish(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                         pmix_op_cbfunc_t, void *) {
    pmix_data_range_t range = range_of(info, ninfo).value_or(PMIX_RANGE_SESSION);
    pmix_persistence_t persist = PMIX_PERSIST_APP;
    for (size_t i = 0; info != nullptr && i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_PERSISTENCE) && info[i].value.type == PMIX_PERSIST)
            persist = info[i].value.data.persist;
    }
    std::list<Entry> fresh;
    for (size_t i = 0; info != nullptr && i < ninfo; ++i) {
        if (is_directive(info[i])) continue;
        Entry e;
        e.key.assign(info[i].key, strnlen(info[i].key, PMIX_MAX_KEYLEN));
        e.publisher = *proc;
        e.range = range;
        e.persist = persist;
        PMIx_Value_xfer(&e.value, &info[i].value);
        fresh.push_back(std::move(e));
    }
    if (fresh.empty()) return PMIX_ERR_BAD_PARAM;
    std::vector<Delivery> out;
    {
        std::lock_guard lock(g_mutex);
        for (const auto &e : fresh) {
            for (const auto &old : g_entries) {
                if (old.key == e.key && domain_of(old) == domain_of(e)) {
                    for (auto &f : fresh) PMIx_Value_destruct(&f.value);
                    return PMIX_ERR_DUPLICATE_KEY;
                }
            }
        }
        g_entries.splice(g_entries.end(), fresh);
        release_waiters(out);
    }
    deliver(out);
    return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t on_lookup(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                        size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void *cbdata) {
    Waiter w;
    w.requester = *proc;
    for (char **k = keys; k != nullptr && *k != nullptr; ++k) w.keys.emplace_back(*k);
    if (w.keys.empty()) return PMIX_ERR_BAD_PARAM;
    w.range = range_of(info, ninfo).value_or(PMIX_RANGE_SESSION);
    w.cbfunc = cbfunc;
    w.cbdata = cbdata;
    bool wait = false;
    for (size_t i = 0; info != nullptr && i < ninfo; ++i) {
        const pmix_value_t &v = info[i].value;
        if (PMIX_CHECK_KEY(&info[i], PMIX_WAIT)) {
            // 4.x: an int ("at least this many keys, 0 = all"); older callers: a bool.
            if (v.type == PMIX_BOOL) {
                wait = v.data.flag;
            } else if (v.type == PMIX_INT) {
                wait = true;
                if (v.data.integer > 0) w.need = static_cast<std::size_t>(v.data.integer);
            } else if (v.type == PMIX_UNDEF) {
                wait = true;
            }
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_TIMEOUT)) {
            int t = v.type == PMIX_INT      ? v.data.integer
                    : v.type == PMIX_UINT32 ? static_cast<int>(v.data.uint32)
                                            : 0;
            if (t > 0) w.deadline = Clock::now() + std::chrono::seconds(t);
        }
    }
    if (w.need == 0 || w.need > w.keys.size()) w.need = w.keys.size();
    std::vector<Delivery> out;
    {
        std::lock_guard lock(g_mutex);
        if (!try_answer(w, !wait, PMIX_ERR_NOT_FOUND, out)) {
            const bool timed = w.deadline.has_value();
            g_waiters.push_back(std::move(w));
            if (timed) g_wake.notify_all();
        }
    }
    deliver(out);
    return PMIX_SUCCESS;  // the answer came (or will come) through cbfunc
}

pmix_status_t on_unpublish(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                           size_t ninfo, pmix_op_cbfunc_t, void *) {
    const auto range = range_of(info, ninfo);
    std::vector<std::string> wanted;
    for (char **k = keys; k != nullptr && *k != nullptr; ++k) wanted.emplace_back(*k);
    std::size_t removed = 0;
    {
        std::lock_guard lock(g_mutex);
        erase_entries([&](const Entry &e) {
            if (!same_proc(e.publisher, *proc)) return false;
            if (range && e.range != *range) return false;
            if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), e.key) == wanted.end())
                return false;
            ++removed;
            return true;
        });
    }
    if (removed == 0 && !wanted.empty()) return PMIX_ERR_NOT_FOUND;
    return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t on_client_finalized(const pmix_proc_t *proc, void *, pmix_op_cbfunc_t, void *) {
    data_server_proc_ended(*proc);
    return PMIX_OPERATION_SUCCEEDED;
}

// The timer thread: answers the waiting lookups whose timeout expired.
void expire_loop() {
    std::unique_lock lock(g_mutex);
    while (!g_stop) {
        auto next = Clock::time_point::max();
        for (const auto &w : g_waiters) {
            if (w.deadline && *w.deadline < next) next = *w.deadline;
        }
        if (next == Clock::time_point::max()) {
            g_wake.wait(lock);
        } else {
            g_wake.wait_until(lock, next);
        }
        std::vector<Delivery> out;
        const auto now = Clock::now();
        for (auto it = g_waiters.begin(); it != g_waiters.end();) {
            if (it->deadline && *it->deadline <= now) {
                try_answer(*it, true, PMIX_ERR_TIMEOUT, out);
                it = g_waiters.erase(it);
            } else {
                ++it;
            }
        }
        if (!out.empty()) {
            lock.unlock();
            deliver(out);
            lock.lock();
        }
    }
}

}  // namespace

void install_data_server(pmix_server_module_t &module) {
    module.publish = on_publish;
    module.lookup = on_lookup;
    module.unpublish = on_unpublish;
    module.client_finalized = on_client_finalized;
    std::lock_guard lock(g_mutex);
    if (!g_timer.joinable()) {
        g_stop = false;
        g_timer = std::thread(expire_loop);
    }
}

void data_server_proc_ended(const pmix_proc_t &proc) {
    std::vector<Delivery> out;
    {
        std::lock_guard lock(g_mutex);
        erase_entries([&](const Entry &e) {
            return e.persist == PMIX_PERSIST_PROC && same_proc(e.publisher, proc);
        });
        for (auto it = g_waiters.begin(); it != g_waiters.end();) {
            if (same_proc(it->requester, proc)) {
                try_answer(*it, true, PMIX_ERR_NOT_FOUND, out);
                it = g_waiters.erase(it);
            } else {
                ++it;
            }
        }
    }
    deliver(out);
}

void data_server_job_ended(const std::string &nspace) {
    std::lock_guard lock(g_mutex);
    erase_entries([&](const Entry &e) {
        return (e.persist == PMIX_PERSIST_APP || e.persist == PMIX_PERSIST_PROC) &&
               nspace_of(e.publisher) == nspace;
    });
}

void data_server_shutdown() {
    std::vector<Delivery> out;
    {
        std::lock_guard lock(g_mutex);
        for (auto &w : g_waiters) try_answer(w, true, PMIX_ERR_NOT_FOUND, out);
        g_waiters.clear();
        erase_entries([](const Entry &) { return true; });
        g_stop = true;
        g_wake.notify_all();
    }
    if (g_timer.joinable()) g_timer.join();
    deliver(out);
}

}  // namespace pmixrun
