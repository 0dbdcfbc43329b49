// The psensor_heartbeat component: descriptor, parameter, query and module
// factory. Always usable (it needs nothing from the system).
#include "heartbeat_sensor.hpp"

#include "pmixpp/mca/component.hpp"
#include "pmixpp/mca/psensor.hpp"

#include <cstdint>
#include <new>

namespace {

using pmixpp::mca::ComponentParameters;

constexpr int kDefaultPriority = 50;

int register_params(pmixpp_mca_params_t *handle) {
    auto &params = ComponentParameters::from(handle);
    params.add_int("drops",
                   "Heartbeat windows a monitor may miss in a row before it alerts, when the "
                   "request gives no PMIX_MONITOR_HEARTBEAT_DROPS (0: alert on the first empty "
                   "window)",
                   0);
    return 0;
}

std::uint32_t default_drops(pmixpp_mca_params_t *handle) {
    const auto drops = ComponentParameters::from(handle).get("drops");
    if (!drops || drops->int_value < 0 || drops->int_value > UINT32_MAX) return 0;
    return static_cast<std::uint32_t>(drops->int_value);
}

void query(const pmixpp_mca_query_context_t *ctx, pmixpp_mca_query_result_t *result) {
    const auto drops = ComponentParameters::from(ctx->params).get("drops");
    if (drops && drops->int_value < 0) {
        const std::string why = "psensor_heartbeat: psensor_heartbeat_drops = " + drops->value +
                                " (from " + drops->source_detail + ") is negative";
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
    auto *module =
        new (std::nothrow) pmixpp::psensor_heartbeat::HeartbeatSensor(default_drops(ctx->params));
    return static_cast<pmixpp::mca::psensor::Module *>(module);
}

void destroy_module(void *module) {
    delete static_cast<pmixpp::mca::psensor::Module *>(module);
}

}  // namespace

// Version 1.0.0, default priority 50, parameter psensor_heartbeat_drops.
PMIXPP_MCA_COMPONENT(psensor, heartbeat, 1, 0, 0, kDefaultPriority, register_params, query,
                     create_module, destroy_module);
