// pmixrun's side of tool connections (docs/tools.md): the tool_connected
// upcall. pmixrun accepts tools of its own user only; a tool that names
// itself (PMIX_TOOL_NSPACE / PMIX_TOOL_RANK) keeps that identity, any other
// gets a namespace unique on this host ("<hostname>.pmixrun-<pid>.tool-<n>",
// rank 0). The library refuses an identity already in use.
#pragma once

#include <pmix_server.h>

namespace pmixrun {

// Sets tool_connected in `module`.
void install_tool_services(pmix_server_module_t &module);

}  // namespace pmixrun
