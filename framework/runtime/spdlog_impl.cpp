// spdlog's implementation, compiled once into libpmix.
//
// libpmix embeds spdlog (hidden, like the rest of the core: see
// framework/CMakeLists.txt) instead of linking libspdlog.so. Every other core
// source is compiled with SPDLOG_COMPILED_LIB, so spdlog's headers declare
// without defining, and this file is the one place the definitions (spdlog's
// *-inl.h files) are compiled. In header-only mode each source that included
// <spdlog/logger.h> compiled all of them again: ~20 s of a ~25 s compile, the
// bulk of a cold build (docs/building.md, "Test and CI time").
#ifndef SPDLOG_COMPILED_LIB
#error "the core is compiled with SPDLOG_COMPILED_LIB (pmixcore_build)"
#endif

#include <mutex>

#include "runtime/logging.hpp"

#include <spdlog/common-inl.h>
#include <spdlog/details/backtracer-inl.h>
#include <spdlog/details/log_msg-inl.h>
#include <spdlog/details/log_msg_buffer-inl.h>
#include <spdlog/details/os-inl.h>
#include <spdlog/logger-inl.h>
#include <spdlog/pattern_formatter-inl.h>
#include <spdlog/sinks/base_sink-inl.h>
#include <spdlog/sinks/sink-inl.h>
#include <spdlog/sinks/stdout_sinks-inl.h>

// Not spdlog's registry (spdlog-inl.h, registry-inl.h): the core's loggers are
// not registered there (runtime/logging.cpp), so the application's own spdlog
// is left alone.

// The templates the core instantiates (runtime/logging.cpp: stderr_sink_mt).
template class spdlog::sinks::base_sink<std::mutex>;
template class spdlog::sinks::stdout_sink_base<spdlog::details::console_mutex>;
template class spdlog::sinks::stderr_sink<spdlog::details::console_mutex>;

// fmt's formatting engine, declared extern in runtime/logging.hpp.
FMT_BEGIN_NAMESPACE
namespace detail {
template void vformat_to<char>(buffer<char> &, basic_string_view<char>,
                               basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);
}  // namespace detail
FMT_END_NAMESPACE
