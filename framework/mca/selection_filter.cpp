// PMIX_MCA_<fw>=a,b / ^a,b parsing.
#include <algorithm>
#include <cctype>

#include "pmixpp/mca/selection.hpp"

namespace pmixpp::mca {

namespace {
std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}
}  // namespace

bool SelectionFilter::admits(std::string_view component) const {
    const bool named = std::find(names.begin(), names.end(), component) != names.end();
    switch (mode) {
        case Mode::everything:
            return true;
        case Mode::include_only:
            return named;
        case Mode::exclude:
            return !named;
    }
    return true;
}

bool SelectionFilter::requests(std::string_view component) const {
    return mode == Mode::include_only &&
           std::find(names.begin(), names.end(), component) != names.end();
}

McaResult<SelectionFilter> parse_selection(std::string_view framework, std::string_view value,
                                           std::string_view source) {
    SelectionFilter filter;
    std::string_view rest = trim(value);
    if (rest.empty()) return filter;
    const std::string whole(rest);
    filter.mode = SelectionFilter::Mode::include_only;
    if (rest.front() == '^') {
        filter.mode = SelectionFilter::Mode::exclude;
        rest.remove_prefix(1);
    }
    while (true) {
        const auto comma = rest.find(',');
        const std::string_view item = trim(rest.substr(0, comma));
        if (const auto caret = item.find('^'); caret != std::string_view::npos) {
            return McaError{McaStatus::bad_selection,
                            "selection " + std::string(framework) + "=" + whole + " (from " +
                                std::string(source) + "): '^' is allowed only as the first " +
                                "character, to exclude every component listed; found in '" +
                                std::string(item) + "'"};
        }
        if (!item.empty()) filter.names.emplace_back(item);
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return filter;
}

}  // namespace pmixpp::mca
