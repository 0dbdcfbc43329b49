#include "server/server.hpp"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <spdlog/fmt/fmt.h>

#include "mca/logging.hpp"
#include "runtime/progress.hpp"
#include "server/upcalls.hpp"
#include "wire/codec.hpp"
#include "wire/protocol.hpp"

namespace pmixpp::server {

using wire::Channel;
using wire::Frame;

namespace {

auto log() {
    return mca::framework_logger("server");
}

}  // namespace

Server &Server::instance() {
    static auto *server = new Server;  // never destroyed: callbacks may outlive finalize
    return *server;
}

Server::Server() {
    // Departures reach the services in this order (README.md, "Departures",
    // keeps the list): the waiters and registrations on the client first,
    // then its collectives and groups, its job's local support, its channel,
    // and last its tool record (the others may still look it up).
    clients_.subscribe(&iof_);
    clients_.subscribe(&cleanup_);
    clients_.subscribe(&events_);
    clients_.subscribe(&modex_);
    clients_.subscribe(&monitoring_);
    clients_.subscribe(&collectives_);
    clients_.subscribe(&groups_);
    clients_.subscribe(&psets_);
    clients_.subscribe(&local_support_);
    clients_.subscribe(&connections_);
    clients_.subscribe(&tools_);  // last: a departed tool's record goes
    // A participant's own PMIX_GROUP_CONSTRUCT_ABORT event aborts its group's construct.
    events_.observe_client_events([this](const ProcKey &source, const events::Event &ev) {
        groups_.client_event(source, ev);
    });
    // The bootstrap method across servers: the servers' messages, carried by the host
    // (group_bootstrap.cpp); asked first, they are marked by a key of their own.
    events_.observe_host_events(
        [this](const events::Event &ev) { return groups_.bootstrap_message(ev); });
    // Invitations across servers: the servers' messages, carried by the host (group_invite.cpp).
    events_.observe_host_events(
        [this](const events::Event &ev) { return groups_.invitation_message(ev); });
    // PMIX_GROUP_LEFT reaches members served elsewhere through the host, and their servers' Groups;
    // so do a construct's votes and lost members across servers (consumed there).
    events_.observe_host_events([this](const events::Event &ev) { return groups_.host_event(ev); });
    groups_.set_raise_out([this](std::shared_ptr<const events::Event> ev) {
        events_.raise_from_library(std::move(ev));
    });
    // A fence over the members of a group built with PMIX_GROUP_FT_COLLECTIVE goes on without a
    // member that ends.
    collectives_.set_ft_fence(
        [this](const std::vector<pmix_proc_t> &procs) { return groups_.ft_covers(procs); });
}

// ---------------------------------------------------------------------------------------------
// lifecycle

mca::Status Server::start(const pmix_server_module_t *module, std::span<const pmix_info_t> info,
                          std::shared_ptr<ptl_base::Transports> transports,
                          std::shared_ptr<gds_base::Datastore> store) {
    host_.set(module);
    transports_ = std::move(transports);
    store_ = std::move(store);
    modex_.set_store(store_);
    collectives_.set_store(store_);
    queries_.set_store(store_);
    if (auto rc = topology_.start(info); rc != PMIX_SUCCESS)  // network: topology_share.hpp
        return mca::Status(rc, "PMIX_TOPOLOGY2 is not an hwloc topology");

    self_ = pmix_proc_t{};
    std::string ns = fmt::format("pmixpp-server-{}", getpid());
    if (const auto *i = find_info(info, PMIX_SERVER_NSPACE);
        i && i->value.type == PMIX_STRING && i->value.data.string != nullptr) {
        ns = i->value.data.string;
    }
    std::memcpy(self_.nspace, ns.data(), std::min<std::size_t>(ns.size(), PMIX_MAX_NSLEN));
    self_.rank = 0;
    if (const auto *i = find_info(info, PMIX_SERVER_RANK)) {
        if (auto r = wire::as_uint(i->value)) self_.rank = static_cast<pmix_rank_t>(*r);
    }

    if (auto st = connections_.listen(*transports_, info, ns); !st.ok()) {
        stop();
        return st;
    }
    tools_.configure(info);  // tools.hpp
    // PMIX_SERVER_ENABLE_MONITORING: the psensor modules (monitoring.hpp)
    monitoring_.configure(info);
    {
        if (auto st = rendezvous_.write(info, self_, connections_.uris()); !st.ok()) {
            stop();
            return st;
        }
    }
    fork_envs_.invalidate();
    active_ = true;
    return mca::Status::success();
}

void Server::stop() {
    active_ = false;
    fork_envs_.invalidate();
    groups_.clear();
    psets_.clear();
    resources_.clear();
    collectives_.clear();  // shared-memory waiters, trackers, connect state
    tools_.clear();
    host_attributes_.clear();
    rendezvous_.remove();
    topology_.stop();
    for (auto &[ns, job] : clients_.jobs()) {
        for (auto &[rank, client] : job.clients) {
            client.state = ClientRecord::State::finalized;
            client.channel.reset();
        }
    }
    connections_.close_all();
    clients_.clear();
    modex_.clear();
    local_support_.clear();
    cleanup_.clear();
    monitoring_.clear();
    events_.clear();
    iof_.clear();
    logging_.clear();
    transports_.reset();
    store_.reset();
}

// ---------------------------------------------------------------------------------------------
// helpers

void Server::refuse(Channel &ch, const Frame &frame, pmix_status_t status,
                    const std::string &reason) {
    connections_.refuse(ch, frame, status, reason);
}

std::vector<std::uint8_t> Server::job_blob(const std::string &nspace) {
    JobRecord *job = find_job(nspace);
    if (job == nullptr || !job->registered) return {};
    // Assembled once per change of the store, not once per client handshake.
    auto blob = store_->job_blob(nspace);
    if (!blob) return {};
    const auto &b = *blob.value();
    return std::vector<std::uint8_t>(reinterpret_cast<const std::uint8_t *>(b.data()),
                                     reinterpret_cast<const std::uint8_t *>(b.data()) + b.size());
}

// ---------------------------------------------------------------------------------------------
// host calls

pmix_status_t Server::register_nspace(const std::string &nspace, int nlocalprocs,
                                      std::span<const pmix_info_t> info) {
    // Resources the job's own registration does not name come first, so
    // that its own keys override them (PMIx_server_register_resources).
    const auto resources = resources_.job_registered(nspace, info);
    if (!resources.empty()) {
        auto st = store_->write(
            [&](mca::gds::Module &m) { return m.register_job(nspace, resources.span()); });
        if (!st.ok()) {
            log()->error("server: register_nspace {}: resources: {}", nspace, st.message());
            return st.code();
        }
    }
    JobRecord &job = clients_.job(nspace);  // its secret stays: no template changes
    job.registered = true;
    job.nlocalprocs = nlocalprocs;
    if (const auto *i = find_info(info, PMIX_JOB_SIZE)) {
        if (auto n = wire::as_uint(i->value)) job.job_size = static_cast<std::uint32_t>(*n);
    }
    // The server's topology for a job registered without one (topology_share.hpp).
    const auto shared = topology_.job_info(info);
    if (shared) info = shared->span();
    // Every client may ask which server hosts it (PMIX_SERVER_NSPACE and
    // PMIX_SERVER_RANK, job realm), whatever its host registered; a host that
    // names them itself (Open MPI's ORTE does) keeps its own.
    const bool add_server = find_info(info, PMIX_SERVER_NSPACE) == nullptr &&
                            find_info(info, PMIX_SERVER_RANK) == nullptr;
    // A job of one app: the standard lets the host omit PMIX_APPNUM (and the
    // app arrays), and every process is then in app 0; a job-level 0 answers
    // each rank's Get, a rank's own registered value still comes first
    // (docs/dropin.md, "PMIX_APPNUM"; ORTE registers none).
    const pmix_info_t *napps = find_info(info, PMIX_JOB_NUM_APPS);
    const auto apps =
        napps != nullptr ? wire::as_uint(napps->value) : std::optional<std::uint64_t>(1);
    const bool add_appnum = apps && *apps <= 1 && find_info(info, PMIX_APPNUM) == nullptr &&
                            find_info(info, PMIX_APP_INFO_ARRAY) == nullptr;
    wire::InfoArray added_info;
    if (add_server || add_appnum) {
        added_info = wire::InfoArray::copy_of(info);
        if (added_info.size() == info.size()) {
            pmix_info_t added;
            if (add_server) {
                PMIX_INFO_LOAD(&added, PMIX_SERVER_NSPACE, self_.nspace, PMIX_STRING);
                added_info.adopt(added);
                PMIX_INFO_LOAD(&added, PMIX_SERVER_RANK, &self_.rank, PMIX_PROC_RANK);
                added_info.adopt(added);
            }
            if (add_appnum) {
                const std::uint32_t app0 = 0;
                PMIX_INFO_LOAD(&added, PMIX_APPNUM, &app0, PMIX_UINT32);
                added_info.adopt(added);
            }
            info = added_info.span();
        }
    }
    auto st = store_->write([&](mca::gds::Module &m) { return m.register_job(nspace, info); });
    if (!st.ok()) {
        log()->error("server: register_nspace {}: {}", nspace, st.message());
        return st.code();
    }
    collectives_.job_registered(job);
    modex_.job_registered(nspace);
    psets_.job_registered(nspace, info);  // its launch process sets
    return PMIX_SUCCESS;
}

void Server::deregister_nspace(const std::string &nspace) {
    fork_envs_.invalidate();             // fork_env.hpp
    clients_.deregister_nspace(nspace);  // each client departs; then job_deregistered()
    resources_.job_deregistered(nspace);
    auto st = store_->write([&](mca::gds::Module &m) { return m.delete_job(nspace); });
    (void)st;
}

pmix_status_t Server::register_client(const pmix_proc_t &proc, uid_t uid, gid_t gid,
                                      void *server_object) {
    const ProcKey key = key_of(proc);
    clients_.register_client(proc, uid, gid, server_object);
    JobRecord &job = *find_job(key.first);
    collectives_.client_registered(job, uid, gid);
    return PMIX_SUCCESS;
}

void Server::deregister_client(const pmix_proc_t &proc) {
    clients_.deregister_client(key_of(proc));  // departs, then the record goes
}

mca::Result<ForkTemplate> Server::fork_template(const std::string &nspace) {
    JobRecord &job = clients_.job(nspace);
    ForkTemplate tmpl;
    mca::Environment &env = tmpl.env;
    env["PMIX_NAMESPACE"] = nspace;
    // A marker where the child's rank goes: a job's PMIX_SET_ENVAR may
    // replace it, as it replaced the rank before templates.
    static constexpr const char *kRankMarker = "\x01rank";
    env["PMIX_RANK"] = kRankMarker;
    const std::vector<std::string> uris = connections_.uris();
    std::string all;
    for (const auto &uri : uris) all += (all.empty() ? "" : ",") + uri;
    if (!uris.empty()) {
        const std::string best =
            fmt::format("{}.{};{}", key_of(self_).first, self_.rank, uris.front());
        for (const char *name : wire::kServerUriVariables) {
            env[name] = best;
        }
    }
    env["PMIXPP_SERVER_URIS"] = all;
    env["PMIXPP_JOB_SECRET"] = job.secret;
    env["PMIX_SECURITY_MODE"] = "native";
    env["PMIX_BFROP_BUFFER_TYPE"] = "PMIX_BFROP_BUFFER_NON_DESC";
    env["PMIX_GDS_MODULE"] = store_->component();
    env["PMIX_VERSION"] = "4.2.2";
    char host[HOST_NAME_MAX + 1] = {};
    if (gethostname(host, sizeof host - 1) == 0) env["PMIX_HOSTNAME"] = host;
    const char *tmp = std::getenv("TMPDIR");
    env["PMIX_SYSTEM_TMPDIR"] = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
    local_support_.apply_envars(nspace, env);
    tmpl.rank_from_child = env["PMIX_RANK"] == kRankMarker;
    if (tmpl.rank_from_child) env.erase("PMIX_RANK");
    tmpl.per_child = local_support_.per_child(nspace);
    // The transports' variables are the same for every child of the server
    // (ptl.hpp: they are asked once per namespace, rank PMIX_RANK_WILDCARD).
    pmix_proc_t any{};
    PMIX_LOAD_PROCID(&any, nspace.c_str(), PMIX_RANK_WILDCARD);
    for (auto *ptl : transports_->modules()) {
        auto st = ptl->setup_fork(any, env);
        if (!st.ok()) return st;
    }
    return tmpl;
}

void Server::keep_fork_template(const std::string &nspace, std::uint64_t epoch) {
    auto tmpl = fork_template(nspace);
    if (tmpl) fork_envs_.store(nspace, epoch, std::move(tmpl).value());
}

mca::Result<mca::Environment> Server::fork_environment(const pmix_proc_t &proc,
                                                       std::optional<std::uint64_t> epoch) {
    const ProcKey key = key_of(proc);
    auto tmpl = fork_template(key.first);
    if (!tmpl) return tmpl.status();
    mca::Environment env = tmpl.value().for_child(proc);
    if (tmpl.value().per_child) {
        if (auto st = local_support_.modules_setup_fork(proc, env); !st.ok()) return st;
    }
    if (epoch) fork_envs_.store(key.first, *epoch, std::move(tmpl).value());
    return env;
}

}  // namespace pmixpp::server
