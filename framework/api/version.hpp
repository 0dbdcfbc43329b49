// pmixpp's own version. PMIx_Get_version() must answer with the OpenPMIx
// 4.2.2 string that binaries check, so ours is reported here instead
// (pmix_info, logs, bug reports).
#pragma once

#ifndef PMIXPP_VERSION_STRING
#define PMIXPP_VERSION_STRING "unknown"
#endif

namespace pmixpp {

// "0.1.0": the project version from CMake.
__attribute__((visibility("default"))) const char *version() noexcept;

}  // namespace pmixpp
