// pmixrun's side of process groups (docs/groups.md, "For host writers"): the
// `group` upcall of a one-node host. The server library completes a group of
// local processes itself; it calls this upcall for such a group only when a
// context id is wanted, and pmixrun, the only server of its job, then assigns
// one from its own counter (unique for the life of pmixrun) and hands the
// server's endpoint data back (there is no other server to collect from).
#pragma once

#include <pmix_server.h>

namespace pmixrun {

// Sets `group` in `module`.
void install_group_services(pmix_server_module_t &module);

}  // namespace pmixrun
