#include "pmixpp/mca/status.hpp"

namespace pmixpp::mca {

std::string_view to_string(McaStatus status) noexcept {
    switch (status) {
        case McaStatus::ok:
            return "ok";
        case McaStatus::cannot_open:
            return "cannot_open";
        case McaStatus::no_descriptor_symbol:
            return "no_descriptor_symbol";
        case McaStatus::bad_file_name:
            return "bad_file_name";
        case McaStatus::abi_version_mismatch:
            return "abi_version_mismatch";
        case McaStatus::descriptor_too_small:
            return "descriptor_too_small";
        case McaStatus::unknown_framework:
            return "unknown_framework";
        case McaStatus::framework_name_mismatch:
            return "framework_name_mismatch";
        case McaStatus::component_name_mismatch:
            return "component_name_mismatch";
        case McaStatus::interface_version_mismatch:
            return "interface_version_mismatch";
        case McaStatus::duplicate_component:
            return "duplicate_component";
        case McaStatus::incomplete_descriptor:
            return "incomplete_descriptor";
        case McaStatus::register_failed:
            return "register_failed";
        case McaStatus::query_not_available:
            return "query_not_available";
        case McaStatus::query_error:
            return "query_error";
        case McaStatus::query_fatal:
            return "query_fatal";
        case McaStatus::query_threw:
            return "query_threw";
        case McaStatus::create_failed:
            return "create_failed";
        case McaStatus::bad_parameter_value:
            return "bad_parameter_value";
        case McaStatus::bad_param_file_line:
            return "bad_param_file_line";
        case McaStatus::parameter_type_conflict:
            return "parameter_type_conflict";
        case McaStatus::unknown_parameter:
            return "unknown_parameter";
        case McaStatus::bad_selection:
            return "bad_selection";
        case McaStatus::no_module:
            return "no_module";
        case McaStatus::excluded:
            return "excluded";
        case McaStatus::not_selected:
            return "not_selected";
    }
    return "unknown_status";
}

}  // namespace pmixpp::mca
