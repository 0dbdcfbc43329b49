// Reading parameter files (internal to framework/mca).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "pmixpp/mca/status.hpp"

namespace pmixpp::mca {

struct FileValue {
    std::string value;
    std::string where;  // "path:line"
};
using FileValues = std::map<std::string, FileValue, std::less<>>;

// Adds the "name = value" lines of `path` to `into`, keeping names already
// there (files are read strongest first). '#' starts a comment line; a value may
// be wrapped in double quotes. Malformed lines go to `problems`. A missing file
// adds nothing.
void read_param_file(const std::string &path, FileValues &into, std::vector<McaError> &problems);

}  // namespace pmixpp::mca
