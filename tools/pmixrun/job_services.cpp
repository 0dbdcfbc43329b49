#include "job_services.hpp"

#include "data_server.hpp"
#include "job_control.hpp"

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace pmixrun {
namespace {

using ProcKey = std::pair<std::string, pmix_rank_t>;

std::mutex g_mutex;
std::map<ProcKey, pid_t> g_pids;

std::string nspace_of(const pmix_proc_t &p) {
    return std::string(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN));
}

bool flag(const pmix_info_t &i) {
    return i.value.type == PMIX_UNDEF || (i.value.type == PMIX_BOOL && i.value.data.flag);
}

void write_line(std::FILE *f, const char *text, std::size_t n) {
    std::fwrite(text, 1, n, f);
    if (n == 0 || text[n - 1] != '\n') std::fputc('\n', f);
    std::fflush(f);
}

void on_log(const pmix_proc_t *client, const pmix_info_t data[], size_t ndata,
            const pmix_info_t directives[], size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    bool once = false;
    for (size_t i = 0; directives != nullptr && i < ndirs; ++i) {
        if (PMIX_CHECK_KEY(&directives[i], PMIX_LOG_ONCE)) once = flag(directives[i]);
    }
    std::size_t written = 0;
    for (size_t i = 0; data != nullptr && i < ndata && !(once && written > 0); ++i) {
        const pmix_info_t &d = data[i];
        std::FILE *to = nullptr;
        if (PMIX_CHECK_KEY(&d, PMIX_LOG_STDERR) || PMIX_CHECK_KEY(&d, PMIX_LOG_MSG)) {
            to = stderr;
        } else if (PMIX_CHECK_KEY(&d, PMIX_LOG_STDOUT)) {
            to = stdout;
        } else {
            continue;
        }
        if (d.value.type == PMIX_STRING && d.value.data.string != nullptr) {
            write_line(to, d.value.data.string, std::strlen(d.value.data.string));
            ++written;
        } else if (d.value.type == PMIX_BYTE_OBJECT) {
            std::fprintf(to, "pmixrun: rank %u logged %zu bytes\n", client->rank,
                         d.value.data.bo.size);
            std::fflush(to);
            ++written;
        }
    }
    if (cbfunc != nullptr) cbfunc(written > 0 ? PMIX_SUCCESS : PMIX_ERR_NOT_SUPPORTED, cbdata);
}

}  // namespace

void install_job_services(pmix_server_module_t &module) {
    module.job_control = job_control_upcall;
    module.log = on_log;
}

void job_services_started(const pmix_proc_t &proc, pid_t pid) {
    std::lock_guard lock(g_mutex);
    g_pids[{nspace_of(proc), proc.rank}] = pid;
}

std::vector<RunningProc> job_services_find(const pmix_proc_t &target) {
    std::vector<RunningProc> out;
    const std::string ns = nspace_of(target);
    std::lock_guard lock(g_mutex);
    for (const auto &[key, pid] : g_pids) {
        if (key.first != ns || (target.rank != PMIX_RANK_WILDCARD && key.second != target.rank))
            continue;
        RunningProc rp{};
        std::memcpy(rp.proc.nspace, ns.data(), std::min<std::size_t>(ns.size(), PMIX_MAX_NSLEN));
        rp.proc.rank = key.second;
        rp.pid = pid;
        out.push_back(rp);
    }
    return out;
}

void job_services_ended(const std::string &nspace, pmix_rank_t rank) {
    {
        std::lock_guard lock(g_mutex);
        g_pids.erase({nspace, rank});
    }
    pmix_proc_t proc{};
    std::memcpy(proc.nspace, nspace.data(), std::min<std::size_t>(nspace.size(), PMIX_MAX_NSLEN));
    proc.rank = rank;
    data_server_proc_ended(proc);
    job_control_proc_ended(proc);
}

}  // namespace pmixrun
