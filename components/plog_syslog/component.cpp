// The plog_syslog component: descriptor, parameters, query and module factory.
//
// Always usable: whether the socket is there is found out per record (a
// daemon may start after us), and an unreachable one is that entry's
// PMIX_ERR_UNREACH, never a silent success.
#include "syslog_channel.hpp"

#include "pmixpp/mca/component.hpp"
#include "pmixpp/mca/plog.hpp"

#include <new>
#include <string>

namespace {

using pmixpp::mca::ComponentParameters;
namespace ps = pmixpp::plog_syslog;

constexpr int kDefaultPriority = 50;

int register_params(pmixpp_mca_params_t *handle) {
    auto &params = ComponentParameters::from(handle);
    params.add_string("socket",
                      "Unix datagram socket of the local syslog daemon that records are "
                      "written to",
                      "/dev/log");
    params.add_enum("facility",
                    "Syslog facility of the records (a PMIX_LOG_SYSLOG_PRI that "
                    "names a facility wins)",
                    "user", ps::facility_names());
    params.add_string("ident", "Identity (APP-NAME / TAG) of the records", "pmix");
    params.add_enum("format", "Record format: rfc3164 (the local /dev/log convention) or rfc5424",
                    "rfc3164", {"rfc3164", "rfc5424"});
    return 0;
}

std::string value_of(pmixpp_mca_params_t *handle, const char *name, const char *fallback) {
    const auto p = ComponentParameters::from(handle).get(name);
    return p ? p->value : std::string(fallback);
}

void query(const pmixpp_mca_query_context_t *ctx, pmixpp_mca_query_result_t *result) {
    pmixpp::mca::report_usable(result, ctx->priority);
}

void *create_module(const pmixpp_mca_query_context_t *ctx) {
    ps::Config config;
    config.socket_path = value_of(ctx->params, "socket", "/dev/log");
    const int facility = ps::facility_code(value_of(ctx->params, "facility", "user"));
    if (facility >= 0) config.facility = facility;
    config.ident = value_of(ctx->params, "ident", "pmix");
    if (config.ident.empty()) config.ident = "pmix";
    config.format = value_of(ctx->params, "format", "rfc3164") == "rfc5424" ? ps::Format::rfc5424
                                                                            : ps::Format::rfc3164;
    auto *module = new (std::nothrow) ps::SyslogChannel(std::move(config));
    return static_cast<pmixpp::mca::plog::Module *>(module);
}

void destroy_module(void *module) {
    delete static_cast<pmixpp::mca::plog::Module *>(module);
}

}  // namespace

// Version 1.0.0, default priority 50; parameters plog_syslog_socket,
// _facility, _ident, _format.
PMIXPP_MCA_COMPONENT(plog, syslog, 1, 0, 0, kDefaultPriority, register_params, query, create_module,
                     destroy_module);
