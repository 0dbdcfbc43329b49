#include "tools.hpp"
#include "launcher.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>

namespace pmixrun {

namespace {

std::atomic<unsigned> g_next_tool{0};

void on_tool_connected(pmix_info_t *info, size_t ninfo, pmix_tool_connection_cbfunc_t cbfunc,
                       void *cbdata) {
    pmix_proc_t proc;
    PMIX_PROC_CONSTRUCT(&proc);
    bool named = false, uid_ok = false;
    proc.rank = 0;
    for (size_t i = 0; i < ninfo; ++i) {
        const pmix_info_t &x = info[i];
        if (PMIX_CHECK_KEY(&x, PMIX_TOOL_NSPACE) && x.value.type == PMIX_STRING &&
            x.value.data.string != nullptr) {
            PMIX_LOAD_NSPACE(proc.nspace, x.value.data.string);
            named = true;
        } else if (PMIX_CHECK_KEY(&x, PMIX_TOOL_RANK) && x.value.type == PMIX_UINT32) {
            proc.rank = x.value.data.uint32;
        } else if (PMIX_CHECK_KEY(&x, PMIX_USERID) && x.value.type == PMIX_UINT32) {
            uid_ok = x.value.data.uint32 == static_cast<uint32_t>(getuid());
        }
    }
    if (!uid_ok) {
        std::fprintf(stderr, "pmixrun: refused a tool of another user\n");
        cbfunc(PMIX_ERR_NO_PERMISSIONS, nullptr, cbdata);
        return;
    }
    if (!named) {
        std::string host = hostname();
        if (host.empty()) host = "localhost";
        const std::string ns = host + ".pmixrun-" + std::to_string(getpid()) + ".tool-" +
                               std::to_string(g_next_tool++);
        PMIX_LOAD_NSPACE(proc.nspace, ns.c_str());
        proc.rank = 0;
    }
    cbfunc(PMIX_SUCCESS, &proc, cbdata);
}

}  // namespace

void install_tool_services(pmix_server_module_t &module) {
    module.tool_connected = on_tool_connected;
}

}  // namespace pmixrun
