// The psensor framework base: every usable psensor module, highest priority first
// (framework/psensor/README.md): psensor_heartbeat, psensor_file.
#pragma once

#include "mca/select.hpp"
#include "pmixpp/mca/psensor.hpp"

namespace pmixpp::psensor_base {

using Sensors = mca::ModuleSet<mca::psensor::Module>;

// Selects the monitoring modules of `repo` (runs on the initializing thread).
// Error no_module ("framework psensor: no component found; search path: ...")
// when there is none: then PMIx_Process_monitor_nb requests go to the host's monitor upcall.
mca::McaResult<Sensors> open(mca::ComponentRepository &repo);

}  // namespace pmixpp::psensor_base
