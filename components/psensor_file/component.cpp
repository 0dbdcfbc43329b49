// The psensor_file component: descriptor, parameters, query and module
// factory. Always usable; its module runs one worker thread for stat().
#include "file_sensor.hpp"

#include "pmixpp/mca/component.hpp"
#include "pmixpp/mca/psensor.hpp"

#include <cstdint>
#include <new>

namespace {

using pmixpp::mca::ComponentParameters;

constexpr int kDefaultPriority = 40;

int register_params(pmixpp_mca_params_t *handle) {
    auto &params = ComponentParameters::from(handle);
    params.add_int("check_time",
                   "Seconds between two checks of a monitored file, when the request gives no "
                   "PMIX_MONITOR_FILE_CHECK_TIME",
                   10);
    params.add_int("drops",
                   "Checks without a change a file monitor tolerates in a row before it alerts, "
                   "when the request gives no PMIX_MONITOR_FILE_DROPS (0: alert on the first)",
                   0);
    return 0;
}

std::uint32_t value_of(pmixpp_mca_params_t *handle, const char *name, std::uint32_t fallback) {
    const auto p = ComponentParameters::from(handle).get(name);
    if (!p || p->int_value < 0 || p->int_value > UINT32_MAX) return fallback;
    return static_cast<std::uint32_t>(p->int_value);
}

void query(const pmixpp_mca_query_context_t *ctx, pmixpp_mca_query_result_t *result) {
    auto &params = ComponentParameters::from(ctx->params);
    for (const char *name : {"check_time", "drops"}) {
        const auto p = params.get(name);
        const bool bad = p && (p->int_value < 0 || (p->int_value == 0 && name[0] == 'c'));
        if (!bad) continue;
        const std::string why = "psensor_file: psensor_file_" + std::string(name) + " = " +
                                p->value + " (from " + p->source_detail + ") is " +
                                (p->int_value < 0 ? "negative" : "zero");
        if (ctx->explicitly_requested != 0) {
            pmixpp::mca::report_fatal(result, why);
        } else {
            pmixpp::mca::report_error(result, why);
        }
        return;
    }
    pmixpp::mca::report_usable(result, ctx->priority);
}

void *create_module(const pmixpp_mca_query_context_t *ctx) {
    try {
        auto *module = new pmixpp::psensor_file::FileSensor(
            value_of(ctx->params, "check_time", 10), value_of(ctx->params, "drops", 0),
            std::make_unique<pmixpp::psensor_file::ThreadProber>());
        return static_cast<pmixpp::mca::psensor::Module *>(module);
    } catch (...) {
        return nullptr;  // no memory or no thread: recorded as create_failed
    }
}

void destroy_module(void *module) {
    delete static_cast<pmixpp::mca::psensor::Module *>(module);
}

}  // namespace

// Version 1.0.0, default priority 40, parameters psensor_file_check_time, _drops.
PMIXPP_MCA_COMPONENT(psensor, file, 1, 0, 0, kDefaultPriority, register_params, query,
                     create_module, destroy_module);
