// The pnet framework base: every usable pnet module, highest priority first
// (framework/pnet/README.md). No component exists yet.
#pragma once

#include "mca/select.hpp"
#include "pmixpp/mca/pnet.hpp"

namespace pmixpp::pnet_base {

using Networks = mca::ModuleSet<mca::pnet::Module>;

// Selects the network set-up modules of `repo` (runs on the initializing thread).
// Error no_module ("framework pnet: no component found; search path: ...")
// when there is none: then the server sets up no network for jobs.
mca::McaResult<Networks> open(mca::ComponentRepository &repo);

}  // namespace pmixpp::pnet_base
