// ForkEnvironments: what PMIx_server_setup_fork gives a child, kept per
// namespace so that the host's thread builds a child's environment without a
// hop to the progress thread (issue 17: ORTE calls setup_fork once per rank
// in its serial fork loop).
//
// A namespace's template holds every variable that does not depend on the
// child's rank (the namespace, the server's URIs, the job's secret, the
// library's settings, the job's PMIX_SET_ENVAR / PMIX_ADD_ENVAR from
// setup_local_support, what the transports add); a child's environment is the
// template plus PMIX_RANK. The progress thread builds a template
// (Server::fork_template) after register_nspace and on the first setup_fork
// that finds none; any thread copies it.
//
// Staleness: every call that may change what a template is built from
// (register_nspace, deregister_nspace, setup_local_support, server start and
// stop) invalidates all templates in the caller's thread before it posts its
// work, and again on the progress thread. A template is stored only if no
// invalidation happened since the epoch its builder read before posting, so a
// template built before a change posted earlier is never kept, and a
// setup_fork called after such a call either finds no template and hops (its
// closure runs after the change's, as before), or finds one built after it.
//
// A namespace whose children the pnet modules set up one by one (it went
// through setup_local_support while pnet modules were open: pnet_tcp gives
// each rank its ports) keeps no template: its setup_fork hops, as before.
//
// Threads: every member is safe from any thread. Never used in a child the
// host forked (the mutex may have been held at the fork).
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <pmixpp/mca/sdk_types.hpp>

namespace pmixpp::server {

struct ForkTemplate {
    mca::Environment env;  // every variable but PMIX_RANK (see rank_from_child)
    // PMIX_RANK is the child's rank (false: a PMIX_SET_ENVAR of the job set
    // it, and the template's value stands, as it did before templates).
    bool rank_from_child = true;
    // The pnet modules add to each child: no shortcut (see above).
    bool per_child = false;

    // The child's environment: the template and its rank.
    mca::Environment for_child(const pmix_proc_t &child) const;
};

class ForkEnvironments {
  public:
    // The epoch a template built from now on is stored under (store()).
    std::uint64_t epoch() const;
    // Forget every template; returns the new epoch.
    std::uint64_t invalidate();
    // Keep `tmpl` for `nspace` if nothing was invalidated since `epoch`.
    void store(const std::string &nspace, std::uint64_t epoch, ForkTemplate tmpl);
    // The child's environment from its namespace's template; nullopt when
    // there is none or the namespace's children are set up one by one.
    std::optional<mca::Environment> lookup(const pmix_proc_t &child) const;

  private:
    mutable std::mutex mutex_;
    std::uint64_t epoch_ = 0;
    std::map<std::string, ForkTemplate> templates_;
};

}  // namespace pmixpp::server
