#include "psensor/psensor_base.hpp"

namespace pmixpp::psensor_base {

mca::McaResult<Sensors> open(mca::ComponentRepository &repo) {
    return Sensors::open(repo, mca::psensor::kFrameworkName);
}

}  // namespace pmixpp::psensor_base
