// The exported PMIx_* functions whose real implementation has not landed yet.
//
// Contract (docs/status.md): a function that is not built yet never fakes
// success. Before any face of the library is initialized it answers
// PMIX_ERR_INIT, as the standard requires of every call made too early; once
// a face is initialized it answers PMIX_ERR_NOT_SUPPORTED. A non-blocking form returns that
// status at once, so by the standard's rule its callback is never called.
// Output pointers of the blocking forms are set to empty values so a caller
// that frees them on error frees nothing.
//
// The two void functions that take a callback (PMIx_server_deregister_nspace,
// PMIx_server_deregister_client) have no return value to carry the status;
// the standard's equivalent is to report it through the callback, which they
// call once, inline, when one is given.
//
// When an area lands, its functions move out of this file into their face's
// folder; the exported_symbols test makes sure none goes missing.
#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>

extern "C" {

// ---- Client: initialization --------------------------------------------------------------------
// ---- Client: key/value exchange and synchronization --------------------------------------------
// ---- Client: publish / lookup ------------------------------------------------------------------
// ---- Client: resolve -----------------------------------------------------------
// ---- Client: query, log, allocation, job control, monitoring -----------------------------------
// ---- Client: credentials -----------------------------------------------------------------------
// PMIx_Get_credential(_nb), PMIx_Validate_credential(_nb): framework/api/credential_api.cpp.
PMIX_EXPORT void PMIx_Progress(void) {
    // Nothing to drive: no runtime, no progress engine yet.
}

// ---- Server ------------------------------------------------------------------------------------
// PMIx_server_register_resources / _deregister_resources: framework/api/server_api.cpp.

// ---- Tool --------------------------------------------------------------------------------------
// PMIx_tool_init / PMIx_tool_finalize: framework/client/tool.cpp.
// PMIx_IOF_pull / _deregister / _push: framework/api/iof_api.cpp.
// PMIx_tool_attach_to_server, _connect_to_server, _disconnect, _get_servers,
// _set_server: framework/client/tool.cpp.

}  // extern "C"
