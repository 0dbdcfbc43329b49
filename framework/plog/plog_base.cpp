// The plog base: selecting the channel modules (routing: plog_router.cpp).
#include "plog/plog_base.hpp"

namespace pmixpp::plog_base {

mca::McaResult<Channels> open(mca::ComponentRepository &repo) {
    return Channels::open(repo, mca::plog::kFrameworkName);
}

}  // namespace pmixpp::plog_base
