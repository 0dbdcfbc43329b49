#include "pnet/pnet_base.hpp"

namespace pmixpp::pnet_base {

mca::McaResult<Networks> open(mca::ComponentRepository &repo) {
    return Networks::open(repo, mca::pnet::kFrameworkName);
}

}  // namespace pmixpp::pnet_base
