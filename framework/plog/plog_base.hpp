// The plog framework base: every usable plog module, highest priority first
// (framework/plog/README.md). No component exists yet.
#pragma once

#include "mca/select.hpp"
#include "pmixpp/mca/plog.hpp"

namespace pmixpp::plog_base {

using Channels = mca::ModuleSet<mca::plog::Module>;

// Selects the logging channel modules of `repo` (runs on the initializing thread).
// Error no_module ("framework plog: no component found; search path: ...")
// when there is none: then log entries go to the host's log upcall or are completed with
// PMIX_ERR_NOT_SUPPORTED.
mca::McaResult<Channels> open(mca::ComponentRepository &repo);

}  // namespace pmixpp::plog_base
