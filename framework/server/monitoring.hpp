// Monitoring: PMIx_Process_monitor(_nb) and heartbeats on the server side
// (docs/monitoring.md). Owns every monitor of every client, the psensor
// modules (when the host enabled internal monitoring with
// PMIX_SERVER_ENABLE_MONITORING) and their timers; handles the `monitor` and
// `heartbeat` requests; raises alerts through the EventRouter's narrow
// LibraryEvents interface. A departed client's monitors stop. Progress thread only.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "psensor/monitor_request.hpp"
#include "psensor/psensor_base.hpp"
#include "server/client_table.hpp"
#include "server/event_router.hpp"
#include "server/requests.hpp"
#include "server/upcalls.hpp"

namespace pmixpp::server {

class Monitoring final : public DepartureListener {
  public:
    Monitoring(ClientTable &clients, const HostUpcalls &host, RequestTable &requests,
               LibraryEvents &events);
    ~Monitoring() override;
    // At server start: PMIX_SERVER_ENABLE_MONITORING among `info` selects the
    // psensor modules (none found: every request goes to the host).
    void configure(std::span<const pmix_info_t> info);
    // Its monitors stop (sensors and bookkeeping; a host learns of the
    // departure through its own upcalls).
    void client_departed(const ProcKey &client, Departure why) override;
    // Server stop: every monitor stops, the modules go.
    void clear();

    class Timers;

  private:
    struct Monitor {
        psensor_base::MonitorKind kind{};
        mca::psensor::Module *owner = nullptr;  // nullptr: the host's
        // The processes an internal monitor watches: the requestor, or the
        // processes of this node its PMIX_MONITOR_TARGET_* named.
        std::vector<ProcKey> watched;
        bool host_named = true;  // the host knows it by this id (the caller gave it)
        pmix_status_t code = PMIX_SUCCESS;
        pmix_data_range_t range = PMIX_RANGE_NAMESPACE;
        bool app_control = false;
        std::string key;  // the monitor attribute
    };
    using Monitors = std::map<std::string, Monitor>;  // by id

    void handle_monitor(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    void handle_heartbeat(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    void start(const PendingReply &reply, const ClientRecord &client, const pmix_info_t &monitor,
               psensor_base::MonitorKind kind, pmix_status_t code,
               std::span<const pmix_info_t> directives);
    void cancel(const PendingReply &reply, const ClientRecord &client, const pmix_info_t &monitor,
                std::span<const pmix_info_t> directives);
    // The host's monitor upcall; `done` runs once with its answer.
    void to_host(const ClientRecord &client, const pmix_info_t &monitor, pmix_status_t code,
                 std::span<const pmix_info_t> directives,
                 std::function<void(pmix_status_t, wire::InfoArray)> done);
    void on_violation(const mca::psensor::Violation &v);
    // Where the request's PMIX_MONITOR_TARGET_* and PMIX_MONITOR_LOCAL_ONLY
    // point (monitoring.cpp); an error status and `why` for a bad request.
    struct Targets;
    pmix_status_t resolve_targets(const ClientRecord &client, psensor_base::MonitorKind kind,
                                  std::span<const pmix_info_t> directives, Targets &out,
                                  std::string &why);
    // The internal monitor (`requestor`, `id`) stops watching every process.
    void stop_monitor(const ProcKey &requestor, const std::string &id, Monitor &m);
    // Whether an internal or host heartbeat monitor watches `proc`; tells it
    // (heartbeat_wanted).
    bool heartbeats_wanted(const ProcKey &proc) const;
    void send_heartbeats_wanted(const ProcKey &proc);

    ClientTable &clients_;
    const HostUpcalls &host_;
    LibraryEvents &events_;
    bool enabled_ = false;
    std::unique_ptr<Timers> timers_;  // outlives sensors_
    std::unique_ptr<psensor_base::Sensors> sensors_;
    std::map<ProcKey, Monitors> monitors_;  // by requestor
    // The internal monitors by watched process: the module's id of the
    // watch -> (requestor, id).
    std::map<ProcKey, std::map<std::string, std::pair<ProcKey, std::string>>> watching_;
    std::string hostname_;                 // this node (PMIX_HOSTNAME, or gethostname)
    std::optional<std::uint32_t> nodeid_;  // PMIX_NODEID at PMIx_server_init
    std::uint64_t next_id_ = 1;
};

}  // namespace pmixpp::server
