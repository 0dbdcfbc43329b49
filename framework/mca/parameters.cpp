// Parameter registry: value parsing, the sources and their precedence.
#include "pmixpp/mca/parameters.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <mutex>
#include <utility>

#include "mca/logging.hpp"
#include "mca/param_sources.hpp"

extern "C" char **environ;

#ifndef PMIXPP_SYSCONFDIR
#define PMIXPP_SYSCONFDIR "/etc"
#endif

namespace pmixpp::mca {

namespace {

constexpr std::string_view kEnvPrefix = "PMIX_MCA_";

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto &c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

struct ParsedValue {
    std::string canonical;
    std::int64_t int_value = 0;
    std::uint64_t size_value = 0;
};

// Returns the parsed value, or an McaError whose message says what was expected
// (the caller adds parameter name, value and source).
McaResult<ParsedValue> parse_value(ParamType type, std::string_view text,
                                   const std::vector<std::string> &choices) {
    const std::string_view t = trim(text);
    ParsedValue out;
    switch (type) {
        case ParamType::integer: {
            std::int64_t v = 0;
            const auto *end = t.data() + t.size();
            auto [p, ec] = std::from_chars(t.data() + (!t.empty() && t[0] == '+'), end, v);
            if (t.empty() || ec != std::errc{} || p != end)
                return McaError{McaStatus::bad_parameter_value, "is not an integer"};
            out.int_value = v;
            out.canonical = std::to_string(v);
            return out;
        }
        case ParamType::boolean: {
            const std::string l = lower(t);
            if (l == "1" || l == "true" || l == "yes" || l == "on") {
                out.int_value = 1;
                out.canonical = "true";
            } else if (l == "0" || l == "false" || l == "no" || l == "off") {
                out.canonical = "false";
            } else {
                return McaError{McaStatus::bad_parameter_value,
                                "is not a boolean (true/false, yes/no, on/off, 1/0)"};
            }
            return out;
        }
        case ParamType::size: {
            std::uint64_t v = 0;
            const auto *end = t.data() + t.size();
            auto [p, ec] = std::from_chars(t.data(), end, v);
            std::uint64_t scale = 1;
            if (p != end && p + 1 == end) {
                switch (std::tolower(static_cast<unsigned char>(*p))) {
                    case 'k':
                        scale = 1ull << 10;
                        break;
                    case 'm':
                        scale = 1ull << 20;
                        break;
                    case 'g':
                        scale = 1ull << 30;
                        break;
                    case 't':
                        scale = 1ull << 40;
                        break;
                    default:
                        scale = 0;
                }
                if (scale != 0) ++p;
            }
            if (t.empty() || ec != std::errc{} || p != end || scale == 0 ||
                (v != 0 && v > UINT64_MAX / scale))
                return McaError{McaStatus::bad_parameter_value,
                                "is not a size (bytes, optionally with suffix k, M, G or T)"};
            out.size_value = v * scale;
            out.canonical = std::to_string(out.size_value);
            return out;
        }
        case ParamType::enumeration: {
            for (const auto &c : choices) {
                if (lower(c) == lower(t)) {
                    out.canonical = c;
                    return out;
                }
            }
            std::string allowed;
            for (const auto &c : choices) allowed += (allowed.empty() ? "" : ", ") + c;
            return McaError{McaStatus::bad_parameter_value, "is not one of: " + allowed};
        }
        case ParamType::string:
            out.canonical = std::string(t);
            return out;
    }
    return McaError{McaStatus::bad_parameter_value, "has an unknown type"};
}

}  // namespace

// ---------------------------------------------------------------------------
// Parameter files
// ---------------------------------------------------------------------------

void read_param_file(const std::string &path, FileValues &into, std::vector<McaError> &problems) {
    // POSIX I/O, not std::ifstream: every process reads (or fails to find)
    // these files in PMIx_Init, and a stream would initialise the C++ locale
    // machinery for nothing.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;  // a missing file is normal (no site defaults)
    std::string text;
    char chunk[4096];
    for (;;) {
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n > 0) {
            text.append(chunk, static_cast<std::size_t>(n));
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            break;
        }
    }
    ::close(fd);
    FileValues mine;  // within one file the last assignment wins
    unsigned lineno = 0;
    std::string_view rest = text;
    while (!rest.empty()) {
        const auto nl = rest.find('\n');
        const std::string_view line = rest.substr(0, nl);
        rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
        ++lineno;
        std::string_view l = trim(line);
        if (l.empty() || l.front() == '#') continue;
        const auto eq = l.find('=');
        const std::string where = path + ":" + std::to_string(lineno);
        if (eq == std::string_view::npos || trim(l.substr(0, eq)).empty()) {
            problems.push_back(
                {McaStatus::bad_param_file_line, "parameter file " + where +
                                                     ": expected \"name = value\", found \"" +
                                                     std::string(l) + "\"; line ignored"});
            continue;
        }
        std::string name(trim(l.substr(0, eq)));
        std::string value(trim(l.substr(eq + 1)));
        if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
            value = value.substr(1, value.size() - 2);
        mine[name] = {std::move(value), where};
    }
    // Files are read strongest first: keep what a stronger file already set.
    for (auto &[name, v] : mine) into.emplace(name, std::move(v));
}

// ---------------------------------------------------------------------------
// ParamSourceConfig
// ---------------------------------------------------------------------------

ParamSourceConfig ParamSourceConfig::from_process() {
    ParamSourceConfig cfg;
    for (char **e = environ; e != nullptr && *e != nullptr; ++e) {
        std::string_view kv(*e);
        if (kv.substr(0, kEnvPrefix.size()) != kEnvPrefix) continue;
        const auto eq = kv.find('=');
        if (eq == std::string_view::npos) continue;
        cfg.environment.emplace(std::string(kv.substr(kEnvPrefix.size(), eq - kEnvPrefix.size())),
                                std::string(kv.substr(eq + 1)));
    }
    const std::string sysconf = PMIXPP_SYSCONFDIR;
    if (auto it = cfg.environment.find("mca_base_param_files"); it != cfg.environment.end()) {
        std::string_view rest = it->second;
        while (!rest.empty()) {
            const auto colon = rest.find(':');
            auto item = trim(rest.substr(0, colon));
            if (!item.empty()) cfg.param_files.emplace_back(item);
            if (colon == std::string_view::npos) break;
            rest.remove_prefix(colon + 1);
        }
    } else {
        if (const char *home = std::getenv("HOME"); home != nullptr && *home != '\0')
            cfg.param_files.push_back(std::string(home) + "/.pmix/mca-params.conf");
        cfg.param_files.push_back(sysconf + "/pmix-mca-params.conf");
    }
    if (auto it = cfg.environment.find("mca_base_param_file_override");
        it != cfg.environment.end()) {
        cfg.override_file = it->second;
    } else {
        cfg.override_file = sysconf + "/pmix-mca-params-override.conf";
    }
    return cfg;
}

// ---------------------------------------------------------------------------
// ParameterRegistry
// ---------------------------------------------------------------------------

std::string_view to_string(ParamType type) noexcept {
    switch (type) {
        case ParamType::integer:
            return "int";
        case ParamType::boolean:
            return "bool";
        case ParamType::string:
            return "string";
        case ParamType::size:
            return "size";
        case ParamType::enumeration:
            return "enum";
    }
    return "unknown";
}

std::string_view to_string(ParamSource source) noexcept {
    switch (source) {
        case ParamSource::default_value:
            return "default";
        case ParamSource::param_file:
            return "file";
        case ParamSource::environment:
            return "environment";
        case ParamSource::override_file:
            return "override file";
    }
    return "unknown";
}

std::string param_name(std::string_view framework, std::string_view component,
                       std::string_view name) {
    std::string out(framework);
    if (!component.empty()) out.append("_").append(component);
    if (!name.empty()) out.append("_").append(name);
    return out;
}

struct ParameterRegistry::Impl {
    ParamSourceConfig config;
    FileValues file_values;
    FileValues override_values;
    std::map<std::string, ParamInfo, std::less<>> params;
    std::vector<McaError> problems;
    std::atomic<bool> log_problems{true};
    mutable std::mutex mutex;

    void add_problem(std::string_view framework, McaError problem) {
        if (log_problems)
            framework_logger(framework.empty() ? "mca" : framework)->warn("{}", problem.message);
        problems.push_back(std::move(problem));
    }

    // Candidate values strongest first.
    std::vector<RawValue> candidates(std::string_view name) const {
        std::vector<RawValue> out;
        if (auto it = override_values.find(name); it != override_values.end())
            out.push_back({it->second.value, ParamSource::override_file, it->second.where});
        if (auto it = config.environment.find(name); it != config.environment.end())
            out.push_back({it->second, ParamSource::environment,
                           std::string(kEnvPrefix) + std::string(name)});
        if (auto it = file_values.find(name); it != file_values.end())
            out.push_back({it->second.value, ParamSource::param_file, it->second.where});
        return out;
    }
};

ParameterRegistry::ParameterRegistry(ParamSourceConfig config) : impl_(std::make_unique<Impl>()) {
    impl_->config = std::move(config);
    for (const auto &f : impl_->config.param_files)
        read_param_file(f, impl_->file_values, impl_->problems);
    if (!impl_->config.override_file.empty())
        read_param_file(impl_->config.override_file, impl_->override_values, impl_->problems);
    for (const auto &p : impl_->problems) framework_logger("mca")->warn("{}", p.message);
}

ParameterRegistry::~ParameterRegistry() = default;

ParameterRegistry &ParameterRegistry::process_wide() {
    static ParameterRegistry *registry = [] {
        auto *r = new ParameterRegistry(ParamSourceConfig::from_process());  // never freed:
        // components may read parameters from atexit handlers and other threads.
        std::string files;
        for (const auto &f : r->impl_->config.param_files) files += (files.empty() ? "" : ":") + f;
        r->register_param({"mca_base_param_files",
                           "mca",
                           "base",
                           ParamType::string,
                           "Parameter files, strongest first (colon-separated)",
                           files,
                           {}});
        r->register_param({"mca_base_param_file_override",
                           "mca",
                           "base",
                           ParamType::string,
                           "Override parameter file: stronger than the environment",
                           r->impl_->config.override_file,
                           {}});
        return r;
    }();
    return *registry;
}

McaResult<ParamInfo> ParameterRegistry::register_param(const ParamSpec &spec) {
    std::lock_guard lock(impl_->mutex);
    if (auto it = impl_->params.find(spec.name); it != impl_->params.end()) {
        if (it->second.spec.type == spec.type) return it->second;
        McaError err{McaStatus::parameter_type_conflict,
                     "parameter " + spec.name + ": registered as " +
                         std::string(to_string(it->second.spec.type)) + ", registered again as " +
                         std::string(to_string(spec.type))};
        impl_->add_problem(spec.framework, err);
        return err;
    }
    auto def = parse_value(spec.type, spec.default_value, spec.choices);
    if (!def) {
        McaError err{McaStatus::bad_parameter_value, "parameter " + spec.name +
                                                         ": default value '" + spec.default_value +
                                                         "' " + def.error().message};
        impl_->add_problem(spec.framework, err);
        return err;
    }
    ParamInfo info;
    info.spec = spec;
    info.spec.default_value = def.value().canonical;
    auto apply = [&info](ParsedValue &v, ParamSource src, std::string detail) {
        info.value = std::move(v.canonical);
        info.int_value = v.int_value;
        info.size_value = v.size_value;
        info.source = src;
        info.source_detail = std::move(detail);
    };
    bool resolved = false;
    std::vector<std::string> rejected;  // messages waiting for the value finally used
    for (auto &cand : impl_->candidates(spec.name)) {
        auto parsed = parse_value(spec.type, cand.value, spec.choices);
        if (!parsed) {
            rejected.push_back("parameter " + spec.name + ": value '" + cand.value + "' from " +
                               std::string(to_string(cand.source)) + " (" + cand.source_detail +
                               ") " + parsed.error().message + "; rejected");
            continue;
        }
        apply(parsed.value(), cand.source, cand.source_detail);
        resolved = true;
        break;
    }
    if (!resolved) apply(def.value(), ParamSource::default_value, "default");
    for (auto &msg : rejected) {
        msg += ", using '" + info.value + "' from " + std::string(to_string(info.source));
        impl_->add_problem(spec.framework, {McaStatus::bad_parameter_value, std::move(msg)});
    }
    impl_->params.emplace(spec.name, info);
    return info;
}

std::optional<ParamInfo> ParameterRegistry::find(std::string_view name) const {
    std::lock_guard lock(impl_->mutex);
    if (auto it = impl_->params.find(name); it != impl_->params.end()) return it->second;
    return std::nullopt;
}

std::vector<ParamInfo> ParameterRegistry::all() const {
    std::lock_guard lock(impl_->mutex);
    std::vector<ParamInfo> out;
    out.reserve(impl_->params.size());
    for (const auto &[name, info] : impl_->params) out.push_back(info);
    return out;
}

std::vector<McaError> ParameterRegistry::problems() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->problems;
}

void ParameterRegistry::set_log_problems(bool enabled) noexcept {
    impl_->log_problems = enabled;
}

std::optional<ParameterRegistry::RawValue> ParameterRegistry::raw_value(
    std::string_view name) const {
    std::lock_guard lock(impl_->mutex);
    if (auto it = impl_->params.find(name); it != impl_->params.end())
        return RawValue{it->second.value, it->second.source, it->second.source_detail};
    auto c = impl_->candidates(name);
    if (c.empty()) return std::nullopt;
    return c.front();
}

// ---------------------------------------------------------------------------
// ComponentParameters
// ---------------------------------------------------------------------------

ComponentParameters::ComponentParameters(ParameterRegistry &registry, std::string framework,
                                         std::string component)
    : registry_(registry), framework_(std::move(framework)), component_(std::move(component)) {}

ComponentParameters &ComponentParameters::from(pmixpp_mca_params_t *handle) noexcept {
    return *reinterpret_cast<ComponentParameters *>(handle);
}

pmixpp_mca_params_t *ComponentParameters::handle() noexcept {
    return reinterpret_cast<pmixpp_mca_params_t *>(this);
}

std::optional<ParamInfo> ComponentParameters::add(std::string_view name, ParamType type,
                                                  std::string_view description,
                                                  std::string default_text,
                                                  std::vector<std::string> choices) {
    ParamSpec spec{param_name(framework_, component_, name),
                   framework_,
                   component_,
                   type,
                   std::string(description),
                   std::move(default_text),
                   std::move(choices)};
    auto r = registry_.register_param(spec);
    if (!r) return std::nullopt;  // recorded in problems(); callers answer the default
    return std::move(r).value();
}

std::int64_t ComponentParameters::add_int(std::string_view name, std::string_view description,
                                          std::int64_t default_value) {
    auto info = add(name, ParamType::integer, description, std::to_string(default_value), {});
    return info ? info->int_value : default_value;
}

bool ComponentParameters::add_bool(std::string_view name, std::string_view description,
                                   bool default_value) {
    auto info = add(name, ParamType::boolean, description, default_value ? "true" : "false", {});
    return info ? info->int_value != 0 : default_value;
}

std::string ComponentParameters::add_string(std::string_view name, std::string_view description,
                                            std::string_view default_value) {
    auto info = add(name, ParamType::string, description, std::string(default_value), {});
    return info ? info->value : std::string(default_value);
}

std::uint64_t ComponentParameters::add_size(std::string_view name, std::string_view description,
                                            std::uint64_t default_value) {
    auto info = add(name, ParamType::size, description, std::to_string(default_value), {});
    return info ? info->size_value : default_value;
}

std::string ComponentParameters::add_enum(std::string_view name, std::string_view description,
                                          std::string_view default_value,
                                          std::vector<std::string> choices) {
    auto info = add(name, ParamType::enumeration, description, std::string(default_value),
                    std::move(choices));
    return info ? info->value : std::string(default_value);
}

std::optional<ParamInfo> ComponentParameters::get(std::string_view name) const {
    return registry_.find(param_name(framework_, component_, name));
}

}  // namespace pmixpp::mca
