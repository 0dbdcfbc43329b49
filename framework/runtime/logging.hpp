// One spdlog logger per framework ("pmix.<fw>"), writing to stderr, at the level
// that <fw>_base_verbose asks for. Internal to libpmix. The table lives in the
// bottom layer so that runtime/ can log too; the MCA layer sets the levels from
// its parameters (mca/repository.cpp) and gives the layers above these names as
// mca::framework_logger / mca::set_framework_verbosity (mca/logging.hpp).
#pragma once

#include <memory>
#include <string_view>

#include <spdlog/logger.h>

// Every spdlog call formats through fmt::detail::vformat_to<char>, a template
// fmt 9 defines in its header without an extern declaration: each source that
// logged instantiated fmt's whole formatting engine (~750 functions, most of
// a small source's compile under ASan). Declared extern here, it is
// instantiated once, in runtime/spdlog_impl.cpp (libfmt.so exports the same
// instantiation, for programs that link it instead).
FMT_BEGIN_NAMESPACE
namespace detail {
extern template void vformat_to<char>(buffer<char> &, basic_string_view<char>,
                                      basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);
}  // namespace detail
FMT_END_NAMESPACE

namespace pmixpp::runtime {

// Created on first use at level "warn" (verbosity 0). Never returns null.
std::shared_ptr<spdlog::logger> framework_logger(std::string_view framework);

// Verbosity N -> level: 0 warnings and errors only, 1-4 info, 5-9 debug, 10+ trace.
void set_framework_verbosity(std::string_view framework, long long verbosity);

}  // namespace pmixpp::runtime
