// C++ helpers for component authors, over the C descriptor of component.h.
//
//   #include "pmixpp/mca/component.hpp"
//   #include "pmixpp/mca/ptl.hpp"
//   namespace {
//   int register_params(pmixpp_mca_params_t *h) {
//       auto &p = pmixpp::mca::ComponentParameters::from(h);
//       p.add_int("port", "TCP port to listen on (0: any)", 0);
//       return 0;
//   }
//   void query(const pmixpp_mca_query_context_t *ctx, pmixpp_mca_query_result_t *r) {
//       pmixpp::mca::report_usable(r, ctx->priority);
//   }
//   void *create(const pmixpp_mca_query_context_t *) {
//       return static_cast<pmixpp::mca::ptl::Module *>(new TcpModule);
//   }
//   void destroy(void *m) { delete static_cast<pmixpp::mca::ptl::Module *>(m); }
//   }  // namespace
//   PMIXPP_MCA_COMPONENT(ptl, tcp, 1, 0, 0, /*default priority*/ 30,
//                        register_params, query, create, destroy);
#pragma once

#include <cstddef>
#include <string_view>

#include "pmixpp/mca/component.h"
#include "pmixpp/mca/parameters.hpp"

// Declares the descriptor symbol pmix_mca_<fw>_<comp>_component.
#define PMIXPP_MCA_COMPONENT_SYMBOL(fw, comp)                       \
    extern "C" PMIXPP_COMPONENT_EXPORT const pmixpp_mca_component_t \
        pmix_mca_##fw##_##comp##_component

// Defines the descriptor of component <fw>_<comp>. `fw` must be the namespace of
// a framework interface header already included (pmixpp::mca::<fw>), whose
// kInterfaceMajor/Minor and kFrameworkName are recorded in the descriptor.
#define PMIXPP_MCA_COMPONENT(fw, comp, major, minor, release, priority, register_fn, query_fn, \
                             create_fn, destroy_fn)                                            \
    PMIXPP_MCA_COMPONENT_SYMBOL(fw, comp) = {                                                  \
        PMIXPP_MCA_COMPONENT_ABI_VERSION,                                                      \
        static_cast<uint32_t>(sizeof(pmixpp_mca_component_t)),                                 \
        ::pmixpp::mca::fw::kFrameworkName,                                                     \
        #comp,                                                                                 \
        (major),                                                                               \
        (minor),                                                                               \
        (release),                                                                             \
        ::pmixpp::mca::fw::kInterfaceMajor,                                                    \
        ::pmixpp::mca::fw::kInterfaceMinor,                                                    \
        (priority),                                                                            \
        (register_fn),                                                                         \
        (query_fn),                                                                            \
        (create_fn),                                                                           \
        (destroy_fn),                                                                          \
    }

namespace pmixpp::mca {

// Fill a query result. Inline on purpose: each component gets its own copy, so
// nothing here is a libpmix symbol a component depends on.
inline void report_query(pmixpp_mca_query_result_t *result, pmixpp_mca_query_outcome_t outcome,
                         int priority, std::string_view message = {}) noexcept {
    result->outcome = outcome;
    result->priority = priority;
    const auto n =
        message.size() < sizeof(result->message) - 1 ? message.size() : sizeof(result->message) - 1;
    for (std::size_t i = 0; i < n; ++i) result->message[i] = message[i];
    result->message[n] = '\0';
}
inline void report_usable(pmixpp_mca_query_result_t *result, int priority) noexcept {
    report_query(result, PMIXPP_MCA_QUERY_USABLE, priority);
}
inline void report_not_available(pmixpp_mca_query_result_t *result,
                                 std::string_view why = {}) noexcept {
    report_query(result, PMIXPP_MCA_QUERY_NOT_AVAILABLE, 0, why);
}
inline void report_error(pmixpp_mca_query_result_t *result, std::string_view message) noexcept {
    report_query(result, PMIXPP_MCA_QUERY_ERROR, 0, message);
}
inline void report_fatal(pmixpp_mca_query_result_t *result, std::string_view message) noexcept {
    report_query(result, PMIXPP_MCA_QUERY_FATAL, 0, message);
}

}  // namespace pmixpp::mca
