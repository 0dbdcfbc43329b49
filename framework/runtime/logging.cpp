#include "runtime/logging.hpp"

#include <map>
#include <mutex>
#include <string>

#include <spdlog/sinks/stdout_sinks.h>

namespace pmixpp::runtime {

namespace {
struct Loggers {
    std::mutex mutex;
    std::shared_ptr<spdlog::sinks::stderr_sink_mt> sink =
        std::make_shared<spdlog::sinks::stderr_sink_mt>();
    std::map<std::string, std::shared_ptr<spdlog::logger>, std::less<>> by_framework;
};

Loggers &loggers() {
    static auto *l = new Loggers;  // never freed: logging may happen during exit
    return *l;
}

spdlog::level::level_enum level_for(long long verbosity) {
    if (verbosity <= 0) return spdlog::level::warn;
    if (verbosity < 5) return spdlog::level::info;
    if (verbosity < 10) return spdlog::level::debug;
    return spdlog::level::trace;
}
}  // namespace

std::shared_ptr<spdlog::logger> framework_logger(std::string_view framework) {
    auto &l = loggers();
    std::lock_guard lock(l.mutex);
    if (auto it = l.by_framework.find(framework); it != l.by_framework.end()) return it->second;
    // Not registered in spdlog's global registry: the application may use spdlog too.
    auto logger = std::make_shared<spdlog::logger>("pmix." + std::string(framework), l.sink);
    logger->set_pattern("[%n] %l: %v");
    logger->set_level(spdlog::level::warn);
    l.by_framework.emplace(std::string(framework), logger);
    return logger;
}

void set_framework_verbosity(std::string_view framework, long long verbosity) {
    if (level_for(verbosity) == spdlog::level::warn) {
        // The level a logger starts at: no need to make one now (the
        // repository sets every framework's verbosity in each PMIx_Init).
        auto &l = loggers();
        std::lock_guard lock(l.mutex);
        auto it = l.by_framework.find(framework);
        if (it != l.by_framework.end()) it->second->set_level(spdlog::level::warn);
        return;
    }
    framework_logger(framework)->set_level(level_for(verbosity));
}

}  // namespace pmixpp::runtime
