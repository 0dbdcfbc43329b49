// LocalSupport: a job's launch-time set-up (PMIx_server_setup_application,
// PMIx_server_setup_local_support, and its part of PMIx_server_setup_fork).
// Owns what setup_local_support was given per nspace and the pnet modules
// (opened on first use; none when no component is usable). A job's
// deregistration forgets its support info and releases the modules' state
// for it. No requests: the host calls it (setup.cpp describes the flow).
// Progress thread only.
#pragma once

#include <pmix_common.h>

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>

#include "pnet/pnet_base.hpp"
#include "server/client_table.hpp"
#include "wire/message.hpp"

#include <pmixpp/mca/status.hpp>

namespace pmixpp::server {

class LocalSupport final : public DepartureListener {
  public:
    // How the pnet modules are opened (the server: pnet_base::open of the
    // process-wide repository). Error no_module: no network set-up for jobs.
    using OpenNetworksFn = std::function<mca::McaResult<pnet_base::Networks>()>;
    // How what the pnet modules give a job's processes (pnet.hpp, job_info)
    // joins the job's data on this node (the server: its datastore's
    // register_job, which merges into what the host registered). Empty: not kept.
    using AddJobInfoFn =
        std::function<mca::Status(const std::string &nspace, std::span<const pmix_info_t>)>;
    explicit LocalSupport(OpenNetworksFn open_networks, AddJobInfoFn add_job_info = {});

    // PMIx_server_setup_application: the info the host delivers to
    // setup_local_support on every node of the job (PMIX_SET_ENVARs of the
    // server's environment with PMIX_SETUP_APP_ENVARS / _ALL, then each pnet
    // module's launch info).
    mca::Result<wire::InfoArray> setup_application(const std::string &nspace,
                                                   std::span<const pmix_info_t> info);
    // PMIx_server_setup_local_support: every pnet module gets `info`; it is
    // kept for the nspace's children (setup_fork); then what each module
    // built against pnet 1.1 gives the job's processes (job_info) is added to
    // the job's data. A module's error: none keeps anything of the nspace.
    pmix_status_t setup_local_support(const std::string &nspace, wire::InfoArray info);
    // A child's environment (PMIx_server_setup_fork): the nspace's
    // PMIX_SET_ENVAR (replaces) / PMIX_ADD_ENVAR (only when unset) entries,
    // then each pnet module's setup_fork.
    mca::Status setup_fork(const pmix_proc_t &proc, mca::Environment &env);
    // setup_fork's two parts: the nspace's PMIX_SET_ENVAR / PMIX_ADD_ENVAR
    // entries (the same for every child), then each pnet module's setup_fork.
    void apply_envars(const std::string &nspace, mca::Environment &env) const;
    mca::Status modules_setup_fork(const pmix_proc_t &proc, mca::Environment &env);
    // Whether the pnet modules may add to the nspace's children one by one:
    // it went through setup_local_support while modules were open (a module
    // learns of a job there, pnet.hpp). False: no module adds anything.
    bool per_child(const std::string &nspace) const;

    void client_departed(const ProcKey &, Departure) override {}
    // The nspace's support info goes; the modules release it.
    void job_deregistered(const std::string &nspace) override;
    // Server stop: everything goes, the modules too.
    void clear();
    // The pnet modules, opened on first use (also the Inventory's, inventory.hpp).
    mca::Result<pnet_base::Networks *> networks();

  private:
    // The modules' job_info for `nspace`, added to the job's data.
    mca::Status add_job_info(const std::string &nspace);

    OpenNetworksFn open_networks_;
    AddJobInfoFn add_job_info_;
    std::map<std::string, wire::InfoArray> local_support_;  // per nspace
    std::optional<pnet_base::Networks> networks_;
};

}  // namespace pmixpp::server
