// The LocalSupport service (local_support.hpp): the launch-time set-up data
// of a job (pnet.hpp describes the flow).
//
// setup_application (the launcher's server) answers, through its callback,
// the info the host must deliver to setup_local_support on every node of the
// job. Today that is, with PMIX_SETUP_APP_ENVARS / PMIX_SETUP_APP_ALL, one
// PMIX_SET_ENVAR per PMIX_MCA_*, FI_*, UCX_*, PSM2_* and OMPI_MCA_* variable
// of the server's environment (parameter server_base_setup_envar_prefixes:
// the library's and the fabrics' settings travel to the job's processes on
// every node), then
// what every pnet module emits (framework/pnet/README.md). setup_local_support
// hands what it gets to every pnet module and keeps it per nspace; setup_fork
// applies its PMIX_SET_ENVAR / PMIX_ADD_ENVAR entries to each child of that
// nspace, then each module's setup_fork; what the modules give the job's
// processes (job_info, e.g. pnet_tcp's PMIX_FABRIC_ENDPT of every rank) joins
// the job's data at setup_local_support; deregistering the nspace releases
// the modules' state (job_deregistered).
//
// The C entry points are in ../api/setup_api.cpp.
#include "server/local_support.hpp"

#include <pmix_server.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mca/logging.hpp"
#include "wire/codec.hpp"

#include <pmixpp/mca/parameters.hpp>

extern char **environ;

namespace pmixpp::server {

namespace {

auto log() {
    return mca::framework_logger("server");
}

// The variable-name prefixes PMIX_SETUP_APP_ENVARS carries to the job's
// processes: the library's and the fabric libraries' (libfabric, UCX, PSM2)
// and Open MPI's parameters, unless server_base_setup_envar_prefixes says
// otherwise (comma-separated).
const std::vector<std::string> &envar_prefixes() {
    static const std::vector<std::string> prefixes = [] {
        mca::ParamSpec spec;
        spec.name = "server_base_setup_envar_prefixes";
        spec.framework = "server";
        spec.component = "base";
        spec.type = mca::ParamType::string;
        spec.description =
            "Comma-separated prefixes of the server's environment variables that "
            "PMIx_server_setup_application with PMIX_SETUP_APP_ENVARS passes to the job's "
            "processes";
        spec.default_value = "PMIX_MCA_,FI_,UCX_,PSM2_,OMPI_MCA_";
        auto result = mca::ParameterRegistry::process_wide().register_param(spec);
        const std::string text = result ? result.value().value : spec.default_value;
        std::vector<std::string> out;
        std::string_view rest(text);
        while (!rest.empty()) {
            const auto comma = rest.find(',');
            const std::string_view one = rest.substr(0, comma);
            if (!one.empty()) out.emplace_back(one);
            rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        }
        return out;
    }();
    return prefixes;
}

bool carried(std::string_view name) {
    for (const auto &p : envar_prefixes())
        if (name.rfind(p, 0) == 0) return true;
    return false;
}

bool flag_set(const pmix_info_t &i) {
    return i.value.type == PMIX_UNDEF || (i.value.type == PMIX_BOOL && i.value.data.flag);
}

}  // namespace

LocalSupport::LocalSupport(OpenNetworksFn open_networks, AddJobInfoFn add_job_info)
    : open_networks_(std::move(open_networks)), add_job_info_(std::move(add_job_info)) {}

mca::Result<wire::InfoArray> LocalSupport::setup_application(const std::string &nspace,
                                                             std::span<const pmix_info_t> info) {
    bool envars = false;
    for (const auto &i : info) {
        if (PMIX_CHECK_KEY(&i, PMIX_SETUP_APP_ENVARS) || PMIX_CHECK_KEY(&i, PMIX_SETUP_APP_ALL)) {
            envars = envars || flag_set(i);
        }
    }
    std::vector<pmix_info_t> out;
    if (envars) {
        for (char **e = environ; e != nullptr && *e != nullptr; ++e) {
            std::string_view entry(*e);
            const auto eq = entry.find('=');
            if (eq == std::string_view::npos || !carried(entry.substr(0, eq))) continue;
            const std::string name(entry.substr(0, eq));
            const std::string value(entry.substr(eq + 1));
            pmix_envar_t envar{const_cast<char *>(name.c_str()), const_cast<char *>(value.c_str()),
                               ':'};
            out.emplace_back();
            std::memset(&out.back(), 0, sizeof(pmix_info_t));
            PMIx_Info_load(&out.back(), PMIX_SET_ENVAR, &envar, PMIX_ENVAR);
        }
    }
    // The network modules' launch info (pnet.hpp), after the variables.
    auto nets = networks();
    mca::Status net_status = nets ? mca::Status::success() : nets.status();
    if (nets) {
        const mca::KeyValueSink sink = [&out](std::string_view key, const pmix_value_t &value) {
            out.emplace_back();
            std::memset(&out.back(), 0, sizeof(pmix_info_t));
            const std::string k(key);
            PMIX_LOAD_KEY(out.back().key, k.c_str());
            PMIx_Value_xfer(&out.back().value, &value);
        };
        for (auto *net : nets.value()->modules()) {
            net_status = net->setup_application(nspace, info, sink);
            if (!net_status.ok()) break;
        }
    }
    if (!net_status.ok()) {
        log()->error("server: setup_application {}: {}", nspace, net_status.message());
        for (auto &i : out) PMIx_Value_destruct(&i.value);
        return net_status;
    }
    log()->debug("server: setup_application {}: {} entries", nspace, out.size());
    auto copy = wire::InfoArray::copy_of(out.data(), out.size());
    for (auto &i : out) PMIx_Value_destruct(&i.value);
    if (copy.size() != out.size()) return mca::Status(PMIX_ERR_NOMEM, "setup_application: copy");
    return copy;
}

pmix_status_t LocalSupport::setup_local_support(const std::string &nspace, wire::InfoArray info) {
    auto nets = networks();
    if (!nets) return nets.status().code();
    for (auto *net : nets.value()->modules()) {
        auto st = net->setup_local_support(nspace, info.span());
        if (!st.ok()) {
            log()->error("server: setup_local_support {}: {}", nspace, st.message());
            for (auto *done : nets.value()->modules()) done->deregister_job(nspace);
            return st.code();
        }
    }
    if (auto st = add_job_info(nspace); !st.ok()) {
        log()->error("server: setup_local_support {}: {}", nspace, st.message());
        for (auto *done : nets.value()->modules()) done->deregister_job(nspace);
        return st.code();
    }
    local_support_[nspace] = std::move(info);
    return PMIX_SUCCESS;
}

mca::Status LocalSupport::add_job_info(const std::string &nspace) {
    if (!add_job_info_ || !networks_) return mca::Status::success();
    std::vector<pmix_info_t> out;
    const mca::KeyValueSink sink = [&out](std::string_view key, const pmix_value_t &value) {
        out.emplace_back();
        std::memset(&out.back(), 0, sizeof(pmix_info_t));
        const std::string k(key);
        PMIX_LOAD_KEY(out.back().key, k.c_str());
        PMIx_Value_xfer(&out.back().value, &value);
    };
    mca::Status st = mca::Status::success();
    for (const auto &selected : networks_->selected()) {
        if (selected.interface_minor < 1) continue;  // job_info is interface 1.1
        st = selected.module->job_info(nspace, sink);
        if (!st.ok()) break;
    }
    if (st.ok() && !out.empty()) st = add_job_info_(nspace, out);
    for (auto &i : out) PMIx_Value_destruct(&i.value);
    return st;
}

mca::Result<pnet_base::Networks *> LocalSupport::networks() {
    if (!networks_) {
        auto opened = open_networks_();
        if (opened) {
            networks_ = std::move(opened).value();
        } else if (opened.error().status == mca::McaStatus::no_module) {
            networks_.emplace();  // no network set-up for jobs (framework/pnet/README.md)
        } else {
            log()->error("server: {}", opened.error().message);
            return mca::Status(PMIX_ERR_NOT_AVAILABLE, opened.error().message);
        }
    }
    return &*networks_;
}

mca::Status LocalSupport::setup_fork(const pmix_proc_t &proc, mca::Environment &env) {
    apply_envars(std::string(proc.nspace, strnlen(proc.nspace, PMIX_MAX_NSLEN)), env);
    return modules_setup_fork(proc, env);
}

void LocalSupport::apply_envars(const std::string &nspace, mca::Environment &env) const {
    auto it = local_support_.find(nspace);
    if (it == local_support_.end()) return;
    for (const auto &i : it->second.span()) {
        const bool set = PMIX_CHECK_KEY(&i, PMIX_SET_ENVAR);
        if (!set && !PMIX_CHECK_KEY(&i, PMIX_ADD_ENVAR)) continue;
        if (i.value.type != PMIX_ENVAR || i.value.data.envar.envar == nullptr) continue;
        const std::string name = i.value.data.envar.envar;
        const char *value = i.value.data.envar.value != nullptr ? i.value.data.envar.value : "";
        if (set || env.find(name) == env.end()) env[name] = value;
    }
}

bool LocalSupport::per_child(const std::string &nspace) const {
    return networks_ && !networks_->modules().empty() && local_support_.contains(nspace);
}

mca::Status LocalSupport::modules_setup_fork(const pmix_proc_t &proc, mca::Environment &env) {
    if (!networks_) return mca::Status::success();  // no job was set up for a network
    for (auto *net : networks_->modules()) {
        auto st = net->setup_fork(proc, env);
        if (!st.ok()) {
            log()->error("server: setup_fork: {}", st.message());
            return st;
        }
    }
    return mca::Status::success();
}

void LocalSupport::job_deregistered(const std::string &nspace) {
    local_support_.erase(nspace);
    if (!networks_) return;
    for (auto *net : networks_->modules()) net->deregister_job(nspace);
}

void LocalSupport::clear() {
    local_support_.clear();
    networks_.reset();
}

}  // namespace pmixpp::server
