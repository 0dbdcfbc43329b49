// Typed MCA parameters: registered by the core and by components, resolved from
// their sources once at registration, and listed (value, source, description)
// by pmix_info. The contract is in framework/mca/README.md, "Parameters".
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pmixpp/mca/component.h"
#include "pmixpp/mca/export.h"
#include "pmixpp/mca/status.hpp"

namespace pmixpp::mca {

enum class ParamType { integer, boolean, string, size, enumeration };

// Where a parameter's current value came from. Declared weakest first: a source
// wins over every source declared before it.
enum class ParamSource { default_value, param_file, environment, override_file };

PMIXPP_SDK_EXPORT std::string_view to_string(ParamType type) noexcept;
PMIXPP_SDK_EXPORT std::string_view to_string(ParamSource source) noexcept;

// Full parameter name: "<fw>_<comp>_<name>", or "<fw>_base_<name>" for a
// framework-wide one (pass component "base").
PMIXPP_SDK_EXPORT std::string param_name(std::string_view framework, std::string_view component,
                                         std::string_view name);

struct ParamSpec {
    std::string name;       // full name, e.g. "ptl_tcp_port"
    std::string framework;  // "ptl"; used to group parameters in pmix_info
    std::string component;  // "tcp", "base" for framework-wide, "" for the selection list
    ParamType type = ParamType::integer;
    std::string description;
    std::string default_value;         // as text; must parse as `type`
    std::vector<std::string> choices;  // enumeration only
};

struct ParamInfo {
    ParamSpec spec;
    std::string value;  // canonical text of the current value
    ParamSource source = ParamSource::default_value;
    std::string
        source_detail;  // "PMIX_MCA_ptl_tcp_port", "/etc/pmix-mca-params.conf:12", "default"
    std::int64_t int_value = 0;    // integer and boolean (0/1)
    std::uint64_t size_value = 0;  // size, in bytes
};

// Where the values come from. Files are read when the registry is built; the
// environment is a snapshot too, so values never change under a running process.
struct PMIXPP_SDK_EXPORT ParamSourceConfig {
    // Environment values by parameter name (the PMIX_MCA_ prefix removed).
    std::map<std::string, std::string, std::less<>> environment;
    // Parameter files, strongest first; missing files are skipped silently.
    std::vector<std::string> param_files;
    // The override file (stronger than the environment); empty for none.
    std::string override_file;

    // From this process: environ's PMIX_MCA_* variables;
    // param_files = $PMIX_MCA_mca_base_param_files (colon-separated) if set, else
    //   ~/.pmix/mca-params.conf then <sysconfdir>/pmix-mca-params.conf;
    // override_file = $PMIX_MCA_mca_base_param_file_override if set, else
    //   <sysconfdir>/pmix-mca-params-override.conf.
    static ParamSourceConfig from_process();
};

// The process's (or a test's) set of registered parameters. Thread-safe.
class PMIXPP_SDK_EXPORT ParameterRegistry {
  public:
    explicit ParameterRegistry(ParamSourceConfig config);
    ~ParameterRegistry();
    ParameterRegistry(const ParameterRegistry &) = delete;
    ParameterRegistry &operator=(const ParameterRegistry &) = delete;

    // Built on first use from ParamSourceConfig::from_process().
    static ParameterRegistry &process_wide();

    // Registers `spec` and resolves its value: override file, environment, param
    // files, default, first that parses. A value that does not parse is rejected
    // (recorded in problems(), naming parameter, value and source) and the next
    // source is used. Registering an existing name with the same type returns the
    // existing parameter; with another type it fails (parameter_type_conflict).
    // A default that does not parse fails with bad_parameter_value.
    McaResult<ParamInfo> register_param(const ParamSpec &spec);

    std::optional<ParamInfo> find(std::string_view name) const;
    // Every registered parameter, sorted by name.
    std::vector<ParamInfo> all() const;
    // Rejected values and malformed file lines, in the order found.
    std::vector<McaError> problems() const;

    // A value for a name nobody registered (yet), with its source detail; used
    // for names read before registration. Same precedence as register_param.
    struct RawValue {
        std::string value;
        ParamSource source = ParamSource::default_value;
        std::string source_detail;
    };
    std::optional<RawValue> raw_value(std::string_view name) const;

    // Whether problems are also logged as warnings (framework logger, stderr)
    // when found. On by default; pmix_info lists problems() itself.
    void set_log_problems(bool enabled) noexcept;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// The C++ face of the pmixpp_mca_params_t handle a component gets in
// register_params() and in its query/create context: registers and reads the
// parameters "<fw>_<comp>_<name>" of one component.
class PMIXPP_SDK_EXPORT ComponentParameters {
  public:
    ComponentParameters(ParameterRegistry &registry, std::string framework, std::string component);

    static ComponentParameters &from(pmixpp_mca_params_t *handle) noexcept;
    pmixpp_mca_params_t *handle() noexcept;

    // Each add_* registers "<fw>_<comp>_<name>" and returns its current value
    // (the default if registration failed; the failure is in problems()).
    std::int64_t add_int(std::string_view name, std::string_view description,
                         std::int64_t default_value);
    bool add_bool(std::string_view name, std::string_view description, bool default_value);
    std::string add_string(std::string_view name, std::string_view description,
                           std::string_view default_value);
    std::uint64_t add_size(std::string_view name, std::string_view description,
                           std::uint64_t default_value);
    std::string add_enum(std::string_view name, std::string_view description,
                         std::string_view default_value, std::vector<std::string> choices);

    // Current value of a parameter this component registered (short name).
    std::optional<ParamInfo> get(std::string_view name) const;

    const std::string &framework() const noexcept { return framework_; }
    const std::string &component() const noexcept { return component_; }
    ParameterRegistry &registry() const noexcept { return registry_; }

  private:
    std::optional<ParamInfo> add(std::string_view name, ParamType type,
                                 std::string_view description, std::string default_text,
                                 std::vector<std::string> choices);

    ParameterRegistry &registry_;
    std::string framework_;
    std::string component_;
};

}  // namespace pmixpp::mca
