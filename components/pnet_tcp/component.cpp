// The pnet_tcp component: descriptor, parameters, query and module factory.
//
// Usable when its port pool parameter is well-formed; a malformed pool is an
// error (fatal when the component was asked for by name).
#include "tcp_network.hpp"

#include "pmixpp/mca/component.hpp"

#include <new>
#include <optional>
#include <string>

namespace {

using pmixpp::mca::ComponentParameters;

constexpr int kDefaultPriority = 50;

int register_params(pmixpp_mca_params_t *handle) {
    auto &params = ComponentParameters::from(handle);
    const pmixpp::pnet_tcp::Settings defaults;
    params.add_string("ports",
                      "Pool of static TCP ports, FIRST-LAST, given to the processes of jobs that "
                      "ask for a \"tcp\" fabric (PMIX_ALLOC_FABRIC)",
                      "32000-32100");
    params.add_string("port_env", "Environment variable that gets a process's first port",
                      defaults.port_env);
    params.add_string("range_env",
                      "Environment variable that gets the number of ports a process has",
                      defaults.range_env);
    params.add_string("key_env", "Environment variable that gets the job's security key",
                      defaults.key_env);
    params.add_string("if_env",
                      "Environment variable that gets the interface a process listens on, when "
                      "the job was planned with its node's inventory (empty: not set)",
                      defaults.if_env);
    return 0;
}

std::optional<pmixpp::pnet_tcp::Settings> configured(pmixpp_mca_params_t *handle,
                                                     std::string *why) {
    auto &params = ComponentParameters::from(handle);
    pmixpp::pnet_tcp::Settings s;
    if (const auto ports = params.get("ports");
        ports && !pmixpp::pnet_tcp::parse_pool(ports->value, s.first_port, s.last_port)) {
        *why = "pnet_tcp: pnet_tcp_ports = '" + ports->value + "' (from " + ports->source_detail +
               ") is not FIRST-LAST with 1 <= FIRST <= LAST <= 65535";
        return std::nullopt;
    }
    for (auto [name, field] :
         {std::pair{"port_env", &s.port_env}, std::pair{"range_env", &s.range_env},
          std::pair{"key_env", &s.key_env}}) {
        if (const auto v = params.get(name); v && !v->value.empty()) *field = v->value;
    }
    if (const auto v = params.get("if_env"); v) s.if_env = v->value;
    return s;
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
    auto settings = configured(ctx->params, &why);
    if (!settings) return nullptr;
    auto *module = new (std::nothrow) pmixpp::pnet_tcp::TcpNetwork(std::move(*settings));
    return static_cast<pmixpp::mca::pnet::Module *>(module);
}

void destroy_module(void *module) {
    delete static_cast<pmixpp::mca::pnet::Module *>(module);
}

}  // namespace

// Version 1.1.0, default priority 50, parameters pnet_tcp_ports, _port_env, _range_env, _key_env,
// _if_env.
PMIXPP_MCA_COMPONENT(pnet, tcp, 1, 1, 0, kDefaultPriority, register_params, query, create_module,
                     destroy_module);
