// The user's include/exclude list for one framework: PMIX_MCA_<fw>=a,b keeps only
// a and b; PMIX_MCA_<fw>=^a,b drops them. One caret, first, or it is an error.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pmixpp/mca/export.h"
#include "pmixpp/mca/status.hpp"

namespace pmixpp::mca {

struct SelectionFilter {
    enum class Mode { everything, include_only, exclude };
    Mode mode = Mode::everything;
    std::vector<std::string> names;  // components named in the list, in order

    // True when the filter lets `component` take part in selection.
    PMIXPP_SDK_EXPORT bool admits(std::string_view component) const;
    // True when the user named `component` in an include list.
    PMIXPP_SDK_EXPORT bool requests(std::string_view component) const;
};

// Parses the value of the selection parameter of `framework`; `source` names
// where it came from ("environment PMIX_MCA_ptl") for the error message.
// Whitespace around names is ignored; an empty value selects everything.
PMIXPP_SDK_EXPORT McaResult<SelectionFilter> parse_selection(std::string_view framework,
                                                             std::string_view value,
                                                             std::string_view source);

}  // namespace pmixpp::mca
