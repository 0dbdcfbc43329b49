// One deliberately broken component per failure mode. The build compiles this
// file once per component with MCATEST_<MODE> defined (tests/mca/CMakeLists.txt).
#include <cstring>

#include "common.hpp"

using namespace mcatest_component;

namespace {
[[maybe_unused]] void not_available(const pmixpp_mca_query_context_t *,
                                    pmixpp_mca_query_result_t *r) {
    pmixpp::mca::report_not_available(r, "no such device on this host");
}
[[maybe_unused]] void fatal(const pmixpp_mca_query_context_t *, pmixpp_mca_query_result_t *r) {
    pmixpp::mca::report_fatal(r, "the requested device is unusable");
}
[[maybe_unused]] void error(const pmixpp_mca_query_context_t *, pmixpp_mca_query_result_t *r) {
    pmixpp::mca::report_error(r, "configuration file is missing");
}
[[maybe_unused]] void throws(const pmixpp_mca_query_context_t *, pmixpp_mca_query_result_t *) {
    throw std::runtime_error("boom from query");
}
[[maybe_unused]] int register_fails(pmixpp_mca_params_t *) {
    return 5;
}
[[maybe_unused]] void *create_nothing(const pmixpp_mca_query_context_t *) {
    return nullptr;
}
}  // namespace

#define MCATEST_DESCRIPTOR(sym, abi, fw, comp, imajor, iminor, reg, query, create)       \
    PMIXPP_MCA_COMPONENT_SYMBOL(mcatest, sym) = {abi,    sizeof(pmixpp_mca_component_t), \
                                                 fw,     comp,                           \
                                                 0,      1,                              \
                                                 0,      imajor,                         \
                                                 iminor, 10,                             \
                                                 reg,    query,                          \
                                                 create, destroy}

#if defined(MCATEST_UNAVAIL)
MCATEST_DESCRIPTOR(unavail, 1, "mcatest", "unavail", 1, 2, no_params, not_available,
                   create_fixed_7);
#elif defined(MCATEST_FATAL)
MCATEST_DESCRIPTOR(fatal, 1, "mcatest", "fatal", 1, 2, no_params, fatal, create_fixed_7);
#elif defined(MCATEST_QUERYERR)
MCATEST_DESCRIPTOR(queryerr, 1, "mcatest", "queryerr", 1, 2, no_params, error, create_fixed_7);
#elif defined(MCATEST_THROWS)
MCATEST_DESCRIPTOR(throws, 1, "mcatest", "throws", 1, 2, no_params, throws, create_fixed_7);
#elif defined(MCATEST_BADREG)
MCATEST_DESCRIPTOR(badreg, 1, "mcatest", "badreg", 1, 2, register_fails, usable, create_fixed_7);
#elif defined(MCATEST_NOCREATE)
MCATEST_DESCRIPTOR(nocreate, 1, "mcatest", "nocreate", 1, 2, no_params, usable, create_nothing);
#elif defined(MCATEST_BADABI)
MCATEST_DESCRIPTOR(badabi, 99, "mcatest", "badabi", 1, 2, no_params, usable, create_fixed_7);
#elif defined(MCATEST_BADIFACE)
MCATEST_DESCRIPTOR(badiface, 1, "mcatest", "badiface", 2, 0, no_params, usable, create_fixed_7);
#elif defined(MCATEST_NEWMINOR)
MCATEST_DESCRIPTOR(newminor, 1, "mcatest", "newminor", 1, 3, no_params, usable, create_fixed_7);
#elif defined(MCATEST_MISNAMED)
MCATEST_DESCRIPTOR(misnamed, 1, "mcatest", "other", 1, 2, no_params, usable, create_fixed_7);
#elif defined(MCATEST_WRONGFW)
MCATEST_DESCRIPTOR(wrongfw, 1, "mcaone", "wrongfw", 1, 2, no_params, usable, create_fixed_7);
#elif defined(MCATEST_NOQUERY)
MCATEST_DESCRIPTOR(noquery, 1, "mcatest", "noquery", 1, 2, no_params, nullptr, create_fixed_7);
#elif defined(MCATEST_NOSYM)
// Exports a descriptor, but under a name that is not pmix_mca_mcatest_nosym_component.
extern "C" PMIXPP_COMPONENT_EXPORT const pmixpp_mca_component_t
    pmix_mca_mcatest_nosym_descriptor = {1,
                                         sizeof(pmixpp_mca_component_t),
                                         "mcatest",
                                         "nosym",
                                         0,
                                         1,
                                         0,
                                         1,
                                         2,
                                         10,
                                         no_params,
                                         usable,
                                         create_fixed_7,
                                         destroy};
#else
#error "define one MCATEST_<MODE>"
#endif
