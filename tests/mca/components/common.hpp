// Shared by the test components: a module returning a fixed value, and the
// descriptor functions most of them use. Everything here is inline/static, so
// each component DSO has its own copy.
#pragma once

#include <stdexcept>

#include "mcatest.hpp"
#include "pmixpp/mca/component.hpp"

namespace mcatest_component {

class FixedModule : public pmixpp::mca::mcatest::Module {
  public:
    explicit FixedModule(int v) : v_(v) {}
    int value() const override { return v_; }

  private:
    int v_;
};

inline int no_params(pmixpp_mca_params_t *) {
    return 0;
}
inline void usable(const pmixpp_mca_query_context_t *ctx, pmixpp_mca_query_result_t *r) {
    pmixpp::mca::report_usable(r, ctx->priority);
}
inline void *create_fixed_7(const pmixpp_mca_query_context_t *) {
    return static_cast<pmixpp::mca::mcatest::Module *>(new FixedModule(7));
}
inline void destroy(void *m) {
    delete static_cast<pmixpp::mca::mcatest::Module *>(m);
}

}  // namespace mcatest_component
