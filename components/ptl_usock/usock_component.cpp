// The descriptor of ptl_usock: parameters, query, module creation.
#include <sys/socket.h>

#include "pmixpp/mca/component.hpp"
#include "pmixpp/mca/ptl.hpp"
#include "ptl_socket.hpp"
#include "usock_transport.hpp"

namespace {

using pmixpp::mca::ComponentParameters;
using pmixpp::ptl_usock::UsockConfig;
using pmixpp::ptl_usock::UsockModule;

// Highest of the transports: local clients prefer it (kernel-checked
// credentials, no TCP stack).
constexpr int kDefaultPriority = 50;

int register_params(pmixpp_mca_params_t *handle) {
    auto &params = ComponentParameters::from(handle);
    params.add_string("tmpdir",
                      "Directory for the server's socket when the server info has no "
                      "PMIX_SERVER_TMPDIR (empty: $TMPDIR, else /tmp)",
                      "");
    params.add_bool("abstract",
                    "Listen on a name in Linux's abstract socket namespace (usock://@name) "
                    "instead of a socket file in the tmpdir, which a host may empty",
                    true);
    return 0;
}

void query(const pmixpp_mca_query_context_t *ctx, pmixpp_mca_query_result_t *result) {
    const pmixpp::ptl_socket::UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!probe) {
        const std::string why =
            "ptl_usock: AF_UNIX sockets unavailable: " + pmixpp::ptl_socket::errno_text(errno);
        if (ctx->explicitly_requested != 0) {
            pmixpp::mca::report_fatal(result, why);
        } else {
            pmixpp::mca::report_not_available(result, why);
        }
        return;
    }
    pmixpp::mca::report_usable(result, ctx->priority);
}

void *create_module(const pmixpp_mca_query_context_t *ctx) {
    UsockConfig config;
    config.priority = ctx->priority;
    auto &params = ComponentParameters::from(ctx->params);
    if (auto tmpdir = params.get("tmpdir")) config.tmpdir = tmpdir->value;
    const auto abstract = params.get("abstract");
    config.abstract = !abstract || abstract->int_value != 0;
    return static_cast<pmixpp::mca::ptl::Module *>(new UsockModule(std::move(config)));
}

void destroy_module(void *module) {
    delete static_cast<pmixpp::mca::ptl::Module *>(module);
}

}  // namespace

PMIXPP_MCA_COMPONENT(ptl, usock, 1, 0, 0, kDefaultPriority, register_params, query, create_module,
                     destroy_module);
