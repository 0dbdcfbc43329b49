// Good component, priority 20, built against an older interface minor (1.0).
#include "common.hpp"

int mcatest_internal_value();  // beta_internal.cpp: returns 2

namespace {
void *create(const pmixpp_mca_query_context_t *) {
    return static_cast<pmixpp::mca::mcatest::Module *>(
        new mcatest_component::FixedModule(mcatest_internal_value()));
}
}  // namespace

PMIXPP_MCA_COMPONENT_SYMBOL(mcatest, beta) = {
    PMIXPP_MCA_COMPONENT_ABI_VERSION,
    sizeof(pmixpp_mca_component_t),
    "mcatest",
    "beta",
    1,
    0,
    0,
    1,
    0,  // interface 1.0: an older minor is fine
    20,
    nullptr,  // no parameters of its own
    mcatest_component::usable,
    create,
    mcatest_component::destroy,
};
