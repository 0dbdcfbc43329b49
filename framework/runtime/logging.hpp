// One spdlog logger per framework ("pmix.<fw>"), writing to stderr, at the level
// that <fw>_base_verbose asks for. Internal to libpmix: framework bases include
// this to log through their framework's logger.
#pragma once

#include <memory>
#include <string_view>

#include <spdlog/logger.h>

namespace pmixpp::mca {

// Created on first use at level "warn" (verbosity 0). Never returns null.
std::shared_ptr<spdlog::logger> framework_logger(std::string_view framework);

// Verbosity N -> level: 0 warnings and errors only, 1-4 info, 5-9 debug, 10+ trace.
void set_framework_verbosity(std::string_view framework, long long verbosity);

}  // namespace pmixpp::mca
