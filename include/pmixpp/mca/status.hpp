// Errors of the component model, as values: a status a program can branch on and
// a message a user can act on.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "pmixpp/mca/export.h"

namespace pmixpp::mca {

enum class McaStatus {
    ok,
    // --- opening and checking a component (LoadStage::open / check) ---
    cannot_open,                 // dlopen failed (missing dependency, not an ELF, ...)
    no_descriptor_symbol,        // pmix_mca_<fw>_<comp>_component not exported
    bad_file_name,               // file is not pmix_mca_<fw>_<comp>.so
    abi_version_mismatch,        // descriptor abi_version != core's
    descriptor_too_small,        // struct_size below the first published layout
    unknown_framework,           // <fw> is not a framework of this core
    framework_name_mismatch,     // descriptor framework_name != <fw> of the file name
    component_name_mismatch,     // descriptor component_name != <comp> of the file name
    interface_version_mismatch,  // interface major differs or minor is newer than core's
    duplicate_component,         // same <fw>_<comp> found earlier in the search path
    incomplete_descriptor,       // query, create_module or destroy_module is NULL
    // --- running a component (LoadStage::register_params / query / create) ---
    register_failed,  // register_params returned nonzero or threw
    query_not_available,
    query_error,
    query_fatal,
    query_threw,
    create_failed,  // create_module returned NULL or threw
    // --- parameters and selection ---
    bad_parameter_value,      // a value that does not parse as the parameter's type
    bad_param_file_line,      // a param-file line that is not "name = value"
    parameter_type_conflict,  // same name registered twice with different types
    unknown_parameter,
    bad_selection,  // PMIX_MCA_<fw> malformed (e.g. caret not first)
    no_module,      // a framework that needs a module got none
    // --- selection decisions that are not failures ---
    excluded,      // left out by PMIX_MCA_<fw>
    not_selected,  // usable, but the policy picked a higher-priority component
};

// Stable lower_snake name of a status ("interface_version_mismatch"), used by
// pmix_info --parsable and in tests.
PMIXPP_SDK_EXPORT std::string_view to_string(McaStatus status) noexcept;

struct McaError {
    McaStatus status = McaStatus::ok;
    std::string message;
};

// A value or an McaError. Deliberately minimal (no monadic helpers) to keep
// instantiations cheap.
template <class T>
class McaResult {
  public:
    McaResult(T value) : v_(std::move(value)) {}         // NOLINT: implicit by design
    McaResult(McaError error) : v_(std::move(error)) {}  // NOLINT
    bool ok() const noexcept { return v_.index() == 0; }
    explicit operator bool() const noexcept { return ok(); }
    T &value() & { return std::get<0>(v_); }
    const T &value() const & { return std::get<0>(v_); }
    T &&value() && { return std::get<0>(std::move(v_)); }
    const McaError &error() const { return std::get<1>(v_); }

  private:
    std::variant<T, McaError> v_;
};

}  // namespace pmixpp::mca
