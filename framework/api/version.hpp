// pmixpp's own version, the project version from CMake. PMIx_Get_version()
// names it too, in the form Open MPI 4.1 accepts (strings_api.cpp).
#pragma once

#ifndef PMIXPP_VERSION_STRING
#define PMIXPP_VERSION_STRING "unknown"
#endif

namespace pmixpp {

// "0.1.0": the project version from CMake.
__attribute__((visibility("default"))) const char *version() noexcept;

}  // namespace pmixpp
