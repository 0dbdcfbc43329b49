// The descriptor of ptl_tcp: parameters, query, module creation.
#include <netinet/in.h>
#include <sys/socket.h>

#include "pmixpp/mca/component.hpp"
#include "pmixpp/mca/ptl.hpp"
#include "tcp_transport.hpp"

namespace {

using pmixpp::mca::ComponentParameters;
using pmixpp::ptl_tcp::ListenPolicy;
using pmixpp::ptl_tcp::TcpConfig;
using pmixpp::ptl_tcp::TcpModule;

// Below ptl_usock: a local client takes AF_UNIX when it has both URIs.
constexpr int kDefaultPriority = 30;

int register_params(pmixpp_mca_params_t *handle) {
    auto &params = ComponentParameters::from(handle);
    params.add_enum("listen",
                    "When a server listens on TCP: auto (when the server info asks for tool, "
                    "system or remote support or sets PMIX_TCP_* attributes, or when local "
                    "clients depend on TCP: PMIX_MCA_ptl names tcp or selects no "
                    "higher-priority transport), always, never",
                    "auto", {"auto", "always", "never"});
    params.add_string("if_include",
                      "Where to listen: comma-separated interface names, addresses and CIDR "
                      "blocks; per family the first that matches an address wins (empty: "
                      "loopback only, 127.0.0.1 and ::1)",
                      "");
    params.add_int("port", "Port to listen on, for IPv4 and IPv6 (0: any free port)", 0);
    params.add_bool("ipv4", "Use IPv4", true);
    params.add_bool("ipv6", "Use IPv6 (where the host has it)", true);
    return 0;
}

struct Families {
    bool ipv4 = false;
    bool ipv6 = false;
};

Families usable_families(ComponentParameters &params) {
    const auto enabled = [&](const char *name) {
        const auto p = params.get(name);
        return !p || p->int_value != 0;
    };
    return {enabled("ipv4") && pmixpp::ptl_tcp::family_available(AF_INET),
            enabled("ipv6") && pmixpp::ptl_tcp::family_available(AF_INET6)};
}

void query(const pmixpp_mca_query_context_t *ctx, pmixpp_mca_query_result_t *result) {
    auto &params = ComponentParameters::from(ctx->params);
    const Families families = usable_families(params);
    if (!families.ipv4 && !families.ipv6) {
        const char *why =
            "ptl_tcp: neither IPv4 nor IPv6 is usable (disabled by ptl_tcp_ipv4/ptl_tcp_ipv6 "
            "or missing on this host)";
        if (ctx->explicitly_requested != 0) {
            pmixpp::mca::report_fatal(result, why);
        } else {
            pmixpp::mca::report_not_available(result, why);
        }
        return;
    }
    const auto port = params.get("port");
    if (port && (port->int_value < 0 || port->int_value > 65535)) {
        pmixpp::mca::report_error(
            result, "ptl_tcp: ptl_tcp_port = " + port->value + " is not a port (0..65535)");
        return;
    }
    pmixpp::mca::report_usable(result, ctx->priority);
}

void *create_module(const pmixpp_mca_query_context_t *ctx) {
    auto &params = ComponentParameters::from(ctx->params);
    const Families families = usable_families(params);
    TcpConfig config;
    config.priority = ctx->priority;
    config.ipv4 = families.ipv4;
    config.ipv6 = families.ipv6;
    if (const auto p = params.get("listen")) {
        config.listen = p->value == "always"  ? ListenPolicy::always
                        : p->value == "never" ? ListenPolicy::never
                                              : ListenPolicy::automatic;
    }
    if (const auto p = params.get("if_include")) config.if_include = p->value;
    if (const auto p = params.get("port"); p && p->int_value > 0 && p->int_value <= 65535) {
        config.port = static_cast<unsigned>(p->int_value);
    }
    return static_cast<pmixpp::mca::ptl::Module *>(new TcpModule(std::move(config)));
}

void destroy_module(void *module) {
    delete static_cast<pmixpp::mca::ptl::Module *>(module);
}

}  // namespace

PMIXPP_MCA_COMPONENT(ptl, tcp, 1, 0, 0, kDefaultPriority, register_params, query, create_module,
                     destroy_module);
