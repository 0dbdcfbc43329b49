// pmixrun's credential upcalls (PMIx_Get_credential, PMIx_Validate_credential;
// docs/security.md, "Credentials"). pmixrun is its own issuing agent, of type
// "pmixrun": a credential is "PMIXRUN1" followed by 32 bytes from getrandom(2),
// recorded with the identity of the process it was issued to (its proc, and
// the uid and gid its server vouches for). Validation looks it up: a known
// credential answers PMIX_USERID, PMIX_GRPID and PMIX_PROCID of its holder and
// PMIX_CRED_TYPE; anything else is PMIX_ERR_INVALID_CRED. A credential is
// good while this pmixrun runs, on this node only (no key leaves pmixrun, so
// a credential cannot be forged, only replayed by a process it was given to).
// A get_credential whose PMIX_CRED_TYPE list does not name "pmixrun":
// PMIX_ERR_NOT_SUPPORTED. Threads: the library's progress thread; the table
// has its own lock.
#pragma once

#include <pmix_server.h>

namespace pmixrun {

// Sets get_credential and validate_credential in `module`.
void install_credentials(pmix_server_module_t &module);

}  // namespace pmixrun
