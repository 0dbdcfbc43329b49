// Components of the test framework "mcaone" (highest priority one). Compiled
// once per component with MCAONE_HIGH or MCAONE_LOW.
#include "common.hpp"

namespace {
[[maybe_unused]] void *create_high(const pmixpp_mca_query_context_t *) {
    return static_cast<pmixpp::mca::mcaone::Module *>(new mcatest_component::FixedModule(50));
}
[[maybe_unused]] void *create_low(const pmixpp_mca_query_context_t *) {
    return static_cast<pmixpp::mca::mcaone::Module *>(new mcatest_component::FixedModule(10));
}
}  // namespace

#if defined(MCAONE_HIGH)
PMIXPP_MCA_COMPONENT(mcaone, high, 1, 0, 0, 50, mcatest_component::no_params,
                     mcatest_component::usable, create_high, mcatest_component::destroy);
#elif defined(MCAONE_LOW)
PMIXPP_MCA_COMPONENT(mcaone, low, 1, 0, 0, 10, mcatest_component::no_params,
                     mcatest_component::usable, create_low, mcatest_component::destroy);
#endif
