// A good ptl component for the pmix_info tests. pmix_info only queries
// components, so create_module has no module to offer.
#include "pmixpp/mca/component.hpp"
#include "pmixpp/mca/ptl.hpp"

namespace {
int register_params(pmixpp_mca_params_t *h) {
    pmixpp::mca::ComponentParameters::from(h).add_string("greeting", "What infogood says", "hello");
    return 0;
}
void query(const pmixpp_mca_query_context_t *ctx, pmixpp_mca_query_result_t *r) {
    pmixpp::mca::report_usable(r, ctx->priority);
}
void *create(const pmixpp_mca_query_context_t *) {
    return nullptr;
}
void destroy(void *) {}
}  // namespace

PMIXPP_MCA_COMPONENT(ptl, infogood, 2, 5, 1, 35, register_params, query, create, destroy);
