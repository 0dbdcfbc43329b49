// PMIx_Get of PMIX_PSET_NAMES in a client or tool (docs/process_sets.md). The sets a process
// belongs to change while the job runs (the host defines and deletes them), so the answer is asked
// of the server each time: a query of the key PMIX_PSET_NAMES with the qualifier PMIX_PROCID
// (server/process_sets.hpp answers it), never a stale copy.
#pragma once

#include <pmix_common.h>

#include <functional>
#include <string>
#include <vector>

namespace pmixpp::client {

// Whether `key` is PMIX_PSET_NAMES.
bool is_pset_names_key(const char *key) noexcept;

// The value a Get of PMIX_PSET_NAMES returns: a DATA_ARRAY of STRING
// (malloc'd; nullptr when out of memory).
pmix_value_t *pset_names_value(const std::vector<std::string> &names);

// Asks the server which sets `target` belongs to; `done` runs once on the
// progress thread with PMIX_SUCCESS and the value (the callee keeps it: copy
// it to keep it), PMIX_ERR_NOT_FOUND (in none), or an error. Not
// PMIX_SUCCESS: `done` never runs.
using PsetNamesDone = std::function<void(pmix_status_t, pmix_value_t *)>;
pmix_status_t pset_names_async(const pmix_proc_t &target, PsetNamesDone done);

}  // namespace pmixpp::client
