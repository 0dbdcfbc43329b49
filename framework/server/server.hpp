// The server face (PMIx_server_*): the state the host registers, the clients'
// connections and the wiring of the services. See README.md in this folder.
//
// Threads: every member is touched only on the progress thread, but for
// fork_envs_ (setup_fork's templates, under their own mutex). The C entry
// points (api/server_api.cpp) copy their arguments and post closures here; host
// completion callbacks (any thread, any time, or inline) are thread-shifted
// with ProgressEngine::post() before they touch anything.
#pragma once

#include <pmix_server.h>

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "event/event.hpp"
#include "event/registry.hpp"
#include "evcache/evcache_base.hpp"
#include "gds/gds_base.hpp"
#include "pmixpp/mca/info.hpp"
#include "server/allocation.hpp"
#include "server/cleanup.hpp"
#include "server/collectives.hpp"
#include "server/connections.hpp"
#include "server/credentials.hpp"
#include "server/client_table.hpp"
#include "server/event_router.hpp"
#include "server/fork_env.hpp"
#include "server/groups.hpp"
#include "server/host_attributes.hpp"
#include "server/iof_router.hpp"
#include "server/local_support.hpp"
#include "server/logging.hpp"
#include "server/modex.hpp"
#include "server/monitoring.hpp"
#include "server/process_sets.hpp"
#include "server/publish.hpp"
#include "server/queries.hpp"
#include "server/rendezvous.hpp"
#include "server/requests.hpp"
#include "server/resources.hpp"
#include "server/tools.hpp"
#include "server/spawn.hpp"
#include "server/upcalls.hpp"
#include "pnet/pnet_base.hpp"
#include "server/fabric.hpp"
#include "server/inventory.hpp"
#include "server/topology_share.hpp"
#include "server/fabric_requests.hpp"
#include "ptl/ptl_base.hpp"
#include "wire/channel.hpp"
#include "wire/message.hpp"
#include "wire/shm_fence.hpp"

struct event;

namespace pmixpp::server {

class HostInfo;  // upcall_results.hpp

class Server {
  public:
    static Server &instance();

    // --- lifecycle (progress thread) ---
    mca::Status start(const pmix_server_module_t *module, std::span<const pmix_info_t> info,
                      std::shared_ptr<ptl_base::Transports> transports,
                      std::shared_ptr<gds_base::Datastore> store);
    void stop();
    bool active() const noexcept { return active_; }

    // --- host calls (progress thread) ---
    pmix_status_t register_nspace(const std::string &nspace, int nlocalprocs,
                                  std::span<const pmix_info_t> info);
    void deregister_nspace(const std::string &nspace);
    pmix_status_t register_client(const pmix_proc_t &proc, uid_t uid, gid_t gid,
                                  void *server_object);
    void deregister_client(const pmix_proc_t &proc);
    // The variables a child needs (PMIx_server_setup_fork): its namespace's
    // template (fork_env.hpp) and what is the child's own. With `epoch`, the
    // template is kept for other threads if nothing changed since.
    mca::Result<mca::Environment> fork_environment(const pmix_proc_t &proc,
                                                   std::optional<std::uint64_t> epoch = {});
    // Build and keep the namespace's template (after register_nspace).
    void keep_fork_template(const std::string &nspace, std::uint64_t epoch);
    // The templates (any thread: fork_env.hpp).
    ForkEnvironments &fork_environments() noexcept { return fork_envs_; }
    // The clients' commits not decoded yet (Modex::pending): the server
    // process's own PMIx_Get decodes the process it reads.
    std::shared_ptr<gds_base::LazyModex> pending_modex() const { return modex_.pending(); }
    void dmodex_request(const pmix_proc_t &proc, pmix_dmodex_response_fn_t cbfunc, void *cbdata) {
        modex_.dmodex_request(proc, cbfunc, cbdata);
    }
    // PMIx_server_setup_application / _setup_local_support (LocalSupport).
    LocalSupport &local_support() { return local_support_; }
    // PMIx_server_collect_inventory / _deliver_inventory (inventory.hpp).
    Inventory &inventory() noexcept { return inventory_; }
    // PMIx_Fabric_register / _update / _deregister in the server (fabric.hpp).
    Fabrics &fabrics() noexcept { return fabrics_; }

    // PMIx_Register_attributes (host_attributes.hpp) and the server process's
    // own query of the host's level.
    pmix_status_t register_host_attributes(const std::string &upcall,
                                           std::vector<wire::AttributeFacts> attributes) {
        return host_attributes_.add(upcall, std::move(attributes));
    }
    void host_attribute_support(std::span<const pmix_info_t> qualifiers,
                                std::vector<pmix_info_t> &entries) const {
        host_attributes_.answer(qualifiers, *host_.operator->(), entries);
    }

    const pmix_proc_t &self() const noexcept { return self_; }
    gds_base::Datastore &store() { return *store_; }

    // --- events (EventRouter; progress thread) ---
    // The event cache chosen at PMIx_server_init (nullptr: none). Set before start().
    void set_event_cache(std::unique_ptr<evcache_base::EventCache> cache) {
        events_.set_cache(std::move(cache));
    }
    void notify_from_host(std::shared_ptr<const events::Event> ev) {
        events_.notify_from_host(std::move(ev));
    }
    void replay_to_self(std::size_t id) { events_.replay_to_self(id); }

    // --- IO forwarding (IofRouter; progress thread) ---
    // PMIx_server_IOF_deliver: to every registration matching the source and
    // channel, else into the cache (docs/iof.md).
    void deliver_iof(const pmix_proc_t &source, pmix_iof_channel_t channel,
                     std::vector<std::uint8_t> bytes, std::shared_ptr<wire::InfoArray> info) {
        iof_.deliver(source, channel, std::move(bytes), std::move(info));
    }

    // --- logging (Logging; progress thread): PMIx_server_init starts it with
    // the plog channels, PMIx_Log in the server process logs through it.
    Logging &logging() { return logging_; }

    // --- process sets (ProcessSets; progress thread)
    ProcessSets &process_sets() { return psets_; }

    // --- resources (Resources; progress thread): PMIx_server_register_resources
    // and _deregister_resources, every job's job-level information.
    Resources &resources() { return resources_; }

  private:
    Server();
    void refuse(wire::Channel &ch, const wire::Frame &frame, pmix_status_t status,
                const std::string &reason);
    ClientRecord *find_client(const ProcKey &key) { return clients_.find_client(key); }
    JobRecord *find_job(const std::string &nspace) { return clients_.find_job(nspace); }

    // The part of a child's environment its rank does not change.
    mca::Result<ForkTemplate> fork_template(const std::string &nspace);

    // The job-level blob of a registered nspace (empty: none).
    std::vector<std::uint8_t> job_blob(const std::string &nspace);

    bool active_ = false;
    HostUpcalls host_;
    pmix_proc_t self_{};
    std::shared_ptr<ptl_base::Transports> transports_;
    std::shared_ptr<gds_base::Datastore> store_;
    RequestTable requests_;
    ClientTable clients_;  // jobs and client records; departures
    Inventory inventory_{[this] { return local_support_.networks(); }};  // network: inventory.cpp
    Fabrics fabrics_{inventory_};                                        // network: fabric.cpp
    TopologySharing topology_;        // network: PMIX_SERVER_SHARE_TOPOLOGY, PMIX_TOPOLOGY2
    RendezvousFiles rendezvous_;      // rendezvous.hpp: tools find this server by them
    HostAttributes host_attributes_;  // PMIx_Register_attributes
    ForkEnvironments fork_envs_;      // setup_fork's templates (any thread; fork_env.hpp)

    // --- the services (README.md): each owns its state and registers its requests
    Cleanup cleanup_{host_, requests_};          // job_control, cleanup directives
    IofRouter iof_{clients_, host_, requests_};  // iof_pull/_deregister/_push, IOF_deliver
    EventRouter events_{clients_, host_, requests_, self_};  // (de)register_events, notify
    Logging logging_{host_, requests_};                      // log
    Modex modex_{clients_, host_, requests_,                 // commit, get, dmodex
                 [this](const std::string &nspace) { return job_blob(nspace); }};
    Allocation allocation_{host_, requests_};           // allocate
    Credentials credentials_{host_, requests_};         // get_credential, validate_credential
    FabricRequests fabric_requests_{host_, requests_};  // network: fabric (fabric_requests.hpp)
    Monitoring monitoring_{clients_, host_, requests_, events_};  // monitor, heartbeat
    // fence, fence_shm_done, connect, disconnect; the CollectiveTracker
    Collectives collectives_{clients_, host_, requests_, modex_,
                             [this](const std::string &nspace) { return job_blob(nspace); }};
    // group_construct, group_destruct, group_leave (docs/groups.md)
    Groups groups_{clients_,
                   host_,
                   requests_,
                   collectives_,
                   modex_,
                   [this](const std::string &nspace) { return job_blob(nspace); },
                   [this](std::shared_ptr<const events::Event> ev) {
                       events_.notify_from_host(std::move(ev));
                   }};
    // PMIx_server_register/deregister_resources: job-level info for every job (resources.hpp)
    Resources resources_{[this](const std::string &nspace, std::span<const pmix_info_t> info) {
        return store_->write([&](mca::gds::Module &m) { return m.register_job(nspace, info); });
    }};
    // process sets: launch labels, PMIx_server_define/delete_process_set (process_sets.hpp)
    ProcessSets psets_{clients_, [this](std::shared_ptr<const events::Event> ev) {
                           events_.notify_from_host(std::move(ev));
                       }};
    // tool handshakes (Role::tool), connected tools (docs/tools.md)
    Tools tools_{
        clients_, host_, self_,
        HandshakeOutcome{
            [this](wire::Channel &ch, const wire::Frame &frame, pmix_status_t status,
                   const std::string &reason) { connections_.refuse(ch, frame, status, reason); },
            [this](wire::Channel &ch, const ProcKey &key) { connections_.authenticate(ch, key); }}};
    // spawn (connects the new job to its parent)
    Spawn spawn_{host_, requests_, [this](const std::string &nspace) { return job_blob(nspace); },
                 [this](const ProcKey &parent, const std::string &nspace) {
                     collectives_.spawned(parent, nspace);
                 }};
    Publishing publishing_{host_, requests_};  // publish, lookup, unpublish
    // query (queries.hpp): groups' and process sets' keys and the host's attribute level
    // through hooks
    Queries queries_{
        clients_, host_, requests_,
        QueryHooks{
            [this](std::span<const pmix_info_t> qualifiers, const std::string &key, HostInfo &out) {
                return groups_.answer_query(qualifiers, key, out) ||
                       psets_.answer_query(qualifiers, key, out);
            },
            [this](std::span<const pmix_info_t> qualifiers, std::vector<pmix_info_t> &entries) {
                host_attribute_support(qualifiers, entries);
            }}};
    // setup_application, setup_local_support, a child's part of setup_fork
    LocalSupport local_support_{
        [] { return pnet_base::open(mca::ComponentRepository::process_wide()); },
        [this](const std::string &nspace, std::span<const pmix_info_t> info) {  // network: job_info
            return store_->write([&](mca::gds::Module &m) { return m.register_job(nspace, info); });
        }};
    // listeners, channels, handshake, finalize, abort (connections.hpp)
    Connections connections_{
        clients_, host_, requests_, self_,
        ConnectionHooks{
            [this](const std::string &nspace) { return job_blob(nspace); },
            [this](const std::string &nspace) { collectives_.client_connected(nspace); },
            [this](const ProcKey &key) { return tools_.is_tool(key); },
            [this](wire::Channel &ch, wire::Frame &frame, const pmix_proc_t &requested,
                   std::uint32_t uid, std::uint32_t gid, std::uint32_t pid, wire::InfoArray info) {
                tools_.handshake(ch, frame, requested, uid, gid, pid, std::move(info));
            }}};
};

}  // namespace pmixpp::server
