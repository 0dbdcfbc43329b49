// The one libpmix C entry point the SDK's InfoArray (pmixpp/mca/info_array.hpp)
// calls, so the fuzz targets need not link the api layer: the same body as
// api/value_api.cpp's.
#include "pmix_common.h"
#include "wire/codec.hpp"

extern "C" void PMIx_Value_destruct(pmix_value_t *val) {
    if (val == nullptr) return;
    pmixpp::wire::destruct(PMIX_VALUE, val, 1);
    val->type = PMIX_UNDEF;
}
