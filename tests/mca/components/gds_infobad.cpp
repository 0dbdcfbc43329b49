// A gds component with a wrong descriptor ABI version, for pmix_info --show-failed.
#include "pmixpp/mca/component.hpp"

namespace {
void query(const pmixpp_mca_query_context_t *, pmixpp_mca_query_result_t *) {}
void *create(const pmixpp_mca_query_context_t *) {
    return nullptr;
}
void destroy(void *) {}
}  // namespace

PMIXPP_MCA_COMPONENT_SYMBOL(gds, infobad) = {77,      sizeof(pmixpp_mca_component_t),
                                             "gds",   "infobad",
                                             1,       0,
                                             0,       1,
                                             0,       10,
                                             nullptr, query,
                                             create,  destroy};
