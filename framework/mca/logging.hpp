// The framework loggers ("pmix.<fw>") live in the runtime layer
// (runtime/logging.hpp); the MCA layer sets their verbosity from the
// <fw>_base_verbose parameters. Framework bases and the layers above include
// this header and log through mca::framework_logger(<fw>).
#pragma once

#include "runtime/logging.hpp"

namespace pmixpp::mca {

using runtime::framework_logger;
using runtime::set_framework_verbosity;

}  // namespace pmixpp::mca
