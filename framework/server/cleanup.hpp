// Cleanup: the job_control request. Cleanup directives (PMIX_REGISTER_CLEANUP,
// PMIX_REGISTER_CLEANUP_DIR and their PMIX_CLEANUP_* modifiers) are kept here
// per client and run when it departs (any Departure); every other directive
// goes to the host's job_control upcall (job_control.cpp). Progress thread only.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "server/client_table.hpp"
#include "server/requests.hpp"
#include "server/upcalls.hpp"

namespace pmixpp::server {

class Cleanup final : public DepartureListener {
  public:
    Cleanup(const HostUpcalls &host, RequestTable &requests);
    // The client's directives run (files and directories removed).
    void client_departed(const ProcKey &client, Departure why) override;
    // Server stop: forgotten, not run.
    void clear() { cleanups_.clear(); }

  private:
    struct CleanupRequest {
        std::vector<std::string> files, dirs, ignore;
        bool recursive = false, empty_only = false, leave_top = false;
    };
    void handle_job_control(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    void run(const ProcKey &proc);

    const HostUpcalls &host_;
    std::map<ProcKey, std::vector<CleanupRequest>> cleanups_;
};

}  // namespace pmixpp::server
