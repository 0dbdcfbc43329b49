// Good component, priority 30, built against interface 1.2 (the core's minor).
// Its module's value comes from mcatest_internal_value() (alpha_internal.cpp),
// a default-visibility function that component beta defines too.
#include "common.hpp"

int mcatest_internal_value();  // alpha_internal.cpp: returns 1

namespace {
int register_params(pmixpp_mca_params_t *h) {
    pmixpp::mca::ComponentParameters::from(h).add_int("answer", "Test parameter of alpha", 42);
    return 0;
}
void *create(const pmixpp_mca_query_context_t *) {
    return static_cast<pmixpp::mca::mcatest::Module *>(
        new mcatest_component::FixedModule(mcatest_internal_value()));
}
}  // namespace

PMIXPP_MCA_COMPONENT(mcatest, alpha, 1, 2, 3, 30, register_params, mcatest_component::usable,
                     create, mcatest_component::destroy);
