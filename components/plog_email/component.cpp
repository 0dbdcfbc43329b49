// The plog_email component: descriptor, parameters, query and module factory.
//
// Built only when CMake finds libcurl (CMakeLists.txt); only this DSO links it.
#include "email_channel.hpp"

#include <curl/curl.h>

#include <new>
#include <string>

#include "pmixpp/mca/component.hpp"
#include "pmixpp/mca/plog.hpp"

namespace {

using pmixpp::mca::ComponentParameters;
namespace pe = pmixpp::plog_email;

constexpr int kDefaultPriority = 40;

int register_params(pmixpp_mca_params_t *handle) {
    auto &params = ComponentParameters::from(handle);
    params.add_string("server",
                      "SMTP server that mail goes to when the entry names none "
                      "(PMIX_LOG_EMAIL_SERVER)",
                      "localhost");
    params.add_int("port", "SMTP port when the entry names none (PMIX_LOG_EMAIL_SRVR_PORT)", 25);
    params.add_string("sender",
                      "Sender address when the entry names none (PMIX_LOG_EMAIL_SENDER_ADDR); "
                      "empty: pmix@<host name>",
                      "");
    params.add_int("timeout",
                   "Seconds a send may take, connection included, before it fails with "
                   "PMIX_ERR_TIMEOUT",
                   30);
    return 0;
}

std::optional<pmixpp::mca::ParamInfo> param(pmixpp_mca_params_t *handle, const char *name) {
    return ComponentParameters::from(handle).get(name);
}

// The configuration, or the reason it is unusable.
std::optional<pe::Config> configured(pmixpp_mca_params_t *handle, std::string *why) {
    pe::Config config;
    if (auto p = param(handle, "server"); p && !p->value.empty()) config.server = p->value;
    if (auto p = param(handle, "sender")) config.sender = p->value;
    if (auto p = param(handle, "port")) {
        if (p->int_value <= 0 || p->int_value > 65535) {
            *why = "plog_email: plog_email_port = " + p->value + " (from " + p->source_detail +
                   ") is not a port number";
            return std::nullopt;
        }
        config.port = static_cast<int>(p->int_value);
    }
    if (auto p = param(handle, "timeout")) {
        if (p->int_value <= 0) {
            *why = "plog_email: plog_email_timeout = " + p->value + " (from " + p->source_detail +
                   ") must be a positive number of seconds";
            return std::nullopt;
        }
        config.timeout_s = static_cast<int>(p->int_value);
    }
    return config;
}

void query(const pmixpp_mca_query_context_t *ctx, pmixpp_mca_query_result_t *result) {
    std::string why;
    if (!configured(ctx->params, &why)) {
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
    std::string why;
    auto config = configured(ctx->params, &why);
    if (!config) return nullptr;
    // Once per process, on the selecting thread, before any worker exists
    // (curl_global_init is not thread-safe). Never cleaned up: the core never
    // unloads a DSO.
    static const CURLcode global = curl_global_init(CURL_GLOBAL_DEFAULT);
    if (global != CURLE_OK) return nullptr;
    auto *module = new (std::nothrow) pe::EmailChannel(std::move(*config));
    return static_cast<pmixpp::mca::plog::Module *>(module);
}

void destroy_module(void *module) {
    delete static_cast<pmixpp::mca::plog::Module *>(module);
}

}  // namespace

// Version 1.0.0, default priority 40; parameters plog_email_server, _port,
// _sender, _timeout.
PMIXPP_MCA_COMPONENT(plog, email, 1, 0, 0, kDefaultPriority, register_params, query, create_module,
                     destroy_module);
