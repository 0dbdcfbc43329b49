// The table of components compiled into libpmix (PMIXPP_COMPONENTS_STATIC).
// Defined by the .cpp that pmixpp_finalize_static_components() generates
// (cmake/PmixppComponent.cmake): an explicit list, no static initializers.
#pragma once

#include <cstddef>

#include "pmixpp/mca/component.h"

namespace pmixpp::mca {

struct StaticComponentEntry {
    const char *framework;  // from the CMake name <fw>_<comp>, checked like a file name
    const char *component;
    const pmixpp_mca_component_t *descriptor;
};

extern const StaticComponentEntry kStaticComponents[];
extern const std::size_t kStaticComponentCount;

}  // namespace pmixpp::mca
