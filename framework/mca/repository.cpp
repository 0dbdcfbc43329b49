// Finding, opening and checking components (Boost.DLL), and module ownership.
// Selection by priority is in selection.cpp.
#include "pmixpp/mca/repository.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <boost/dll/shared_library.hpp>

#include "mca/logging.hpp"
#include "mca/repository_impl.hpp"
#include "mca/static_components.hpp"

namespace pmixpp::mca {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kFilePrefix = "pmix_mca_";
constexpr std::string_view kFileSuffix = ".so";
constexpr const char *kStaticPath = "(static)";

std::string cstr_or(const char *s, const char *fallback) {
    return s != nullptr ? s : fallback;
}

}  // namespace

// ---------------------------------------------------------------------------
// ComponentRecord / ModuleHandle
// ---------------------------------------------------------------------------

std::string ComponentRecord::version() const {
    if (descriptor == nullptr) return "?";
    return std::to_string(descriptor->version_major) + "." +
           std::to_string(descriptor->version_minor) + "." +
           std::to_string(descriptor->version_release);
}

ModuleHandle::ModuleHandle(ModuleHandle &&other) noexcept
    : module_(std::exchange(other.module_, nullptr)),
      destroy_(std::exchange(other.destroy_, nullptr)),
      library_(std::move(other.library_)),
      component_(std::move(other.component_)) {}

ModuleHandle &ModuleHandle::operator=(ModuleHandle &&other) noexcept {
    if (this != &other) {
        reset();
        module_ = std::exchange(other.module_, nullptr);
        destroy_ = std::exchange(other.destroy_, nullptr);
        library_ = std::move(other.library_);
        component_ = std::move(other.component_);
    }
    return *this;
}

ModuleHandle::~ModuleHandle() {
    reset();
}

void ModuleHandle::reset() noexcept {
    // The component's own code destroys its module, and only then may the DSO go.
    if (module_ != nullptr && destroy_ != nullptr) destroy_(module_);
    module_ = nullptr;
    destroy_ = nullptr;
    library_.reset();
}

// ---------------------------------------------------------------------------
// ComponentRepository: construction and search path
// ---------------------------------------------------------------------------

ComponentRepository::ComponentRepository(ParameterRegistry &parameters, RepositoryOptions options)
    : impl_(std::make_unique<Impl>(parameters, std::move(options))) {
    auto mca_verbose = parameters.register_param(
        {"mca_base_verbose",
         "mca",
         "base",
         ParamType::integer,
         "Verbosity of the component loader itself (same levels as <fw>_base_verbose)",
         "0",
         {}});
    if (mca_verbose) set_framework_verbosity("mca", mca_verbose.value().int_value);
    // The core's layers that log but are not frameworks (README.md, "Verbosity"):
    // the same <name>_base_verbose a user tries for a framework.
    for (const char *layer : {"client", "server", "event", "runtime"}) {
        auto verbose = parameters.register_param(
            {param_name(layer, "base", "verbose"),
             layer,
             "base",
             ParamType::integer,
             std::string("Verbosity of libpmix's ") + layer + " layer, logger pmix." + layer +
                 " (0: warnings only, 1-4: info, 5-9: debug, 10+: trace)",
             "0",
             {}});
        if (verbose) set_framework_verbosity(layer, verbose.value().int_value);
    }
    for (const auto &fw : impl_->options.frameworks) {
        parameters.register_param(
            {fw.name,
             fw.name,
             "",
             ParamType::string,
             "Components of framework " + fw.name +
                 " to consider: a,b keeps only a and b; ^a,b excludes them; empty: all",
             "",
             {}});
        auto verbose =
            parameters.register_param({param_name(fw.name, "base", "verbose"),
                                       fw.name,
                                       "base",
                                       ParamType::integer,
                                       "Verbosity of framework " + fw.name +
                                           " (0: warnings only, 1-4: info, 5-9: debug, 10+: trace)",
                                       "0",
                                       {}});
        if (verbose) set_framework_verbosity(fw.name, verbose.value().int_value);
    }
}

ComponentRepository::~ComponentRepository() = default;

ComponentRepository &ComponentRepository::process_wide() {
    static ComponentRepository *repo = [] {
        auto &params = ParameterRegistry::process_wide();
        RepositoryOptions options;
        options.search_path = default_search_path(params);
        // Never destroyed: modules and their DSOs stay until the process ends.
        return new ComponentRepository(params, std::move(options));
    }();
    return *repo;
}

std::string ComponentRepository::builtin_component_dir() {
    Dl_info info{};
    // Any function of libpmix tells dladdr which file it came from.
    if (dladdr(reinterpret_cast<void *>(&ComponentRepository::builtin_component_dir), &info) == 0 ||
        info.dli_fname == nullptr)
        return {};
    // The components are beside the library's real file. The loader's name
    // may be a symbolic link elsewhere: Debian's /usr/lib/<triplet>/libpmix.so.2
    // points into pmix2/lib/, where a host such as Slurm's mpi/pmix_v4 finds
    // the library (docs/dropin.md); or an installed program's RUNPATH,
    // $ORIGIN/../lib, names <prefix>/bin/../lib/libpmix.so.2.
    std::error_code ec;
    fs::path lib = fs::canonical(info.dli_fname, ec);
    if (ec) lib = fs::absolute(info.dli_fname, ec);
    if (ec) lib = info.dli_fname;
    return (lib.parent_path() / "pmix").lexically_normal().string();
}

std::vector<std::string> ComponentRepository::default_search_path(ParameterRegistry &parameters) {
    const std::string builtin = builtin_component_dir();
    auto param = parameters.register_param(
        {"mca_base_component_path",
         "mca",
         "base",
         ParamType::string,
         "Directories searched for components, colon-separated; replaces the built-in "
         "directory, where the element @default@ stands for it",
         builtin,
         {}});
    const std::string value = param ? param.value().value : builtin;
    std::vector<std::string> dirs;
    std::string_view rest = value;
    while (true) {
        const auto colon = rest.find(':');
        std::string item(rest.substr(0, colon));
        if (item == "@default@") item = builtin;
        if (!item.empty() && std::find(dirs.begin(), dirs.end(), item) == dirs.end())
            dirs.push_back(std::move(item));
        if (colon == std::string_view::npos) break;
        rest.remove_prefix(colon + 1);
    }
    return dirs;
}

const std::vector<std::string> &ComponentRepository::search_path() const noexcept {
    return impl_->options.search_path;
}

const std::vector<FrameworkInfo> &ComponentRepository::frameworks() const noexcept {
    return impl_->options.frameworks;
}

const FrameworkInfo *ComponentRepository::framework(std::string_view name) const noexcept {
    return impl_->find_framework(name);
}

ParameterRegistry &ComponentRepository::parameters() const noexcept {
    return impl_->params;
}

void ComponentRepository::set_log_problems(bool enabled) noexcept {
    impl_->log_problems = enabled;
}

std::vector<ComponentRecord> ComponentRepository::components(std::string_view framework) {
    std::lock_guard lock(impl_->mutex);
    impl_->scan_locked(framework);
    std::vector<ComponentRecord> out;
    for (const auto &r : impl_->records)
        if (r.framework == framework) out.push_back(r);
    std::sort(out.begin(), out.end(),
              [](const auto &a, const auto &b) { return a.component < b.component; });
    return out;
}

std::vector<LoadFailure> ComponentRepository::failures(std::string_view framework) {
    std::lock_guard lock(impl_->mutex);
    impl_->scan_locked(framework);
    std::vector<LoadFailure> out;
    for (const auto &f : impl_->failures)
        if (framework.empty() || f.framework == framework) out.push_back(f);
    return out;
}

void ComponentRepository::scan() {
    std::lock_guard lock(impl_->mutex);
    impl_->scan_locked({});
}

// ---------------------------------------------------------------------------
// Impl: scanning and checking
// ---------------------------------------------------------------------------

ComponentRepository::Impl::Impl(ParameterRegistry &p, RepositoryOptions o)
    : params(p), options(std::move(o)) {}

const FrameworkInfo *ComponentRepository::Impl::find_framework(std::string_view name) const {
    for (const auto &fw : options.frameworks)
        if (fw.name == name) return &fw;
    return nullptr;
}

void ComponentRepository::Impl::record_failure(LoadFailure failure) {
    for (const auto &f : failures) {
        if (f.framework == failure.framework && f.component == failure.component &&
            f.path == failure.path && f.stage == failure.stage && f.status == failure.status)
            return;  // selection may run more than once: keep each failure once
    }
    framework_logger(failure.framework.empty() ? "mca" : failure.framework)
        ->info("{} failed at {}: {}", failure.framework + "_" + failure.component,
               to_string(failure.stage), failure.message);
    failures.push_back(std::move(failure));
}

std::optional<LoadFailure> ComponentRepository::Impl::check_descriptor(
    const pmixpp_mca_component_t &d, const std::string &fw, const std::string &comp,
    const std::string &path) const {
    const std::string who = "component " + fw + "_" + comp + ": ";
    const std::string where = "; path " + path;
    auto fail = [&](McaStatus status, std::string what) {
        return LoadFailure{fw, comp, path, LoadStage::check, status, who + what + where};
    };
    if (d.abi_version != PMIXPP_MCA_COMPONENT_ABI_VERSION)
        return fail(McaStatus::abi_version_mismatch,
                    "descriptor ABI version " + std::to_string(PMIXPP_MCA_COMPONENT_ABI_VERSION) +
                        " expected, file offers " + std::to_string(d.abi_version));
    if (d.struct_size < PMIXPP_MCA_COMPONENT_MIN_SIZE)
        return fail(McaStatus::descriptor_too_small,
                    "descriptor of at least " + std::to_string(PMIXPP_MCA_COMPONENT_MIN_SIZE) +
                        " bytes expected, file offers " + std::to_string(d.struct_size));
    const FrameworkInfo *info = find_framework(fw);
    if (info == nullptr)
        return fail(McaStatus::unknown_framework,
                    "framework '" + fw + "' is not known to this core");
    const std::string dfw = cstr_or(d.framework_name, "(null)");
    if (dfw != fw)
        return fail(McaStatus::framework_name_mismatch,
                    "file name says framework '" + fw + "', descriptor says '" + dfw + "'");
    const std::string dcomp = cstr_or(d.component_name, "(null)");
    if (dcomp != comp)
        return fail(McaStatus::component_name_mismatch,
                    "file name says component '" + comp + "', descriptor says '" + dcomp + "'");
    if (d.interface_major != info->interface_major || d.interface_minor > info->interface_minor)
        return fail(McaStatus::interface_version_mismatch,
                    "framework interface " + std::to_string(info->interface_major) + "." +
                        std::to_string(info->interface_minor) + " expected, file offers " +
                        std::to_string(d.interface_major) + "." +
                        std::to_string(d.interface_minor) + " (major must match, minor at most " +
                        std::to_string(info->interface_minor) + ")");
    if (d.query == nullptr || d.create_module == nullptr || d.destroy_module == nullptr)
        return fail(McaStatus::incomplete_descriptor,
                    "descriptor lacks query, create_module or destroy_module");
    return std::nullopt;
}

const ComponentRecord *ComponentRepository::Impl::find_record(std::string_view fw,
                                                              std::string_view comp) const {
    for (const auto &r : records)
        if (r.framework == fw && r.component == comp) return &r;
    return nullptr;
}

void ComponentRepository::Impl::add_checked(const pmixpp_mca_component_t &d, std::string fw,
                                            std::string comp, std::string path,
                                            std::shared_ptr<const void> library) {
    if (auto failure = check_descriptor(d, fw, comp, path)) {
        record_failure(std::move(*failure));
        return;
    }
    framework_logger(fw)->debug("found component {}_{} {}", fw, comp, path);
    records.push_back(
        ComponentRecord{std::move(fw), std::move(comp), std::move(path), &d, std::move(library)});
}

void ComponentRepository::Impl::scan_file(const fs::path &file) {
    const std::string path = file.string();
    const std::string name = file.filename().string();
    std::string_view stem(name);
    stem.remove_prefix(kFilePrefix.size());
    stem.remove_suffix(kFileSuffix.size());
    const auto underscore = stem.find('_');
    if (underscore == std::string_view::npos || underscore == 0 || underscore + 1 == stem.size()) {
        record_failure({"", std::string(stem), path, LoadStage::scan, McaStatus::bad_file_name,
                        "file " + path + ": not named pmix_mca_<framework>_<component>.so"});
        return;
    }
    std::string fw(stem.substr(0, underscore));
    std::string comp(stem.substr(underscore + 1));
    const std::string who = "component " + fw + "_" + comp + ": ";
    if (find_framework(fw) == nullptr) {
        // Not opened: no reason to run a foreign file's initializers.
        record_failure({fw, comp, path, LoadStage::scan, McaStatus::unknown_framework,
                        who + "framework '" + fw + "' is not known to this core; path " + path});
        return;
    }
    if (const auto *earlier = find_record(fw, comp)) {
        record_failure({fw, comp, path, LoadStage::scan, McaStatus::duplicate_component,
                        who + "already loaded from " + earlier->path + "; ignoring " + path});
        return;
    }
    std::shared_ptr<boost::dll::shared_library> lib;
    try {
        // RTLD_LOCAL: two components' same-named symbols never resolve to each
        // other. RTLD_NOW: a missing dependency fails here, not in the middle of a call.
        lib = std::make_shared<boost::dll::shared_library>(
            file, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    } catch (const std::exception &e) {
        record_failure({fw, comp, path, LoadStage::open, McaStatus::cannot_open,
                        who + "cannot be loaded: " + e.what() + "; path " + path});
        return;
    }
    const std::string symbol = std::string(kFilePrefix) + fw + "_" + comp + "_component";
    if (!lib->has(symbol)) {
        record_failure(
            {fw, comp, path, LoadStage::open, McaStatus::no_descriptor_symbol,
             who + "does not export the descriptor symbol " + symbol + "; path " + path});
        return;
    }
    const auto &descriptor = lib->get<const pmixpp_mca_component_t>(symbol);
    add_checked(descriptor, std::move(fw), std::move(comp), path, std::move(lib));
}

void ComponentRepository::Impl::scan_locked(std::string_view framework) {
    if (scanned_all) return;
    if (!statics_added) {
        statics_added = true;  // first, as before: a file of the same name is a duplicate
        if (options.include_static) {
            for (std::size_t i = 0; i < kStaticComponentCount; ++i) {
                const auto &e = kStaticComponents[i];
                const std::string fw = e.framework, comp = e.component;
                if (find_framework(fw) == nullptr)
                    continue;  // a test repository with its own frameworks
                add_checked(*e.descriptor, fw, comp, kStaticPath, nullptr);
            }
        }
    }
    if (!listed) {
        listed = true;
        for (const auto &dir : options.search_path) {
            std::error_code ec;
            std::vector<fs::path> found;
            for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
                const std::string name = it->path().filename().string();
                if (name.size() > kFilePrefix.size() + kFileSuffix.size() &&
                    name.compare(0, kFilePrefix.size(), kFilePrefix) == 0 &&
                    name.compare(name.size() - kFileSuffix.size(), kFileSuffix.size(),
                                 kFileSuffix) == 0)
                    found.push_back(it->path());
            }
            if (ec) framework_logger("mca")->debug("component directory {}: {}", dir, ec.message());
            std::sort(found.begin(), found.end());  // same order on every run
            for (auto &f : found) {
                std::string name = f.filename().string();
                std::string_view stem(name);
                stem.remove_prefix(kFilePrefix.size());
                const auto underscore = stem.find('_');
                // scan_file() reports a misnamed file; it belongs to no framework.
                std::string fw = underscore == std::string_view::npos || underscore == 0
                                     ? std::string()
                                     : std::string(stem.substr(0, underscore));
                files.push_back({std::move(f), std::move(fw), false});
            }
        }
    }
    for (auto &f : files) {
        if (f.done || (!framework.empty() && f.framework != framework)) continue;
        f.done = true;
        scan_file(f.path);
    }
    if (framework.empty()) scanned_all = true;
}

std::string ComponentRepository::Impl::search_path_text() const {
    std::string out;
    for (const auto &d : options.search_path) out += (out.empty() ? "" : ":") + d;
    return out.empty() ? "(empty)" : out;
}

}  // namespace pmixpp::mca
