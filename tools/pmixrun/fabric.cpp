// pmixrun's fabric upcall (fabric.hpp).
#include "fabric.hpp"

#include <pmix.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace pmixrun {

namespace {

void release_answer(void *cbdata) {
    auto *answer = static_cast<std::vector<pmix_info_t> *>(cbdata);
    for (auto &i : *answer) PMIx_Value_destruct(&i.value);
    delete answer;
}

pmix_status_t on_fabric(const pmix_proc_t *, pmix_fabric_operation_t,
                        const pmix_info_t directives[], size_t ndirs, pmix_info_cbfunc_t cbfunc,
                        void *cbdata) {
    // Register and update describe the node as it is now: the same answer.
    pmix_fabric_t fabric = PMIX_FABRIC_STATIC_INIT;
    pmix_status_t rc = PMIx_Fabric_register(&fabric, directives, ndirs);
    if (rc != PMIX_SUCCESS) return rc;  // no callback
    std::size_t n = 0;
    for (size_t i = 0; i < fabric.ninfo; ++i)
        if (PMIX_CHECK_KEY(&fabric.info[i], PMIX_FABRIC_NUM_DEVICES) &&
            fabric.info[i].value.type == PMIX_SIZE)
            n = fabric.info[i].value.data.size;
    auto *answer = new std::vector<pmix_info_t>(fabric.ninfo);
    for (size_t i = 0; i < fabric.ninfo; ++i) {
        pmix_info_t &out = (*answer)[i];
        std::memset(&out, 0, sizeof out);
        const pmix_info_t &in = fabric.info[i];
        if (PMIX_CHECK_KEY(&in, PMIX_FABRIC_COST_MATRIX) && in.value.type == PMIX_POINTER) {
            pmix_data_array_t cells{PMIX_UINT16, n * n, in.value.data.ptr};
            PMIx_Info_load(&out, PMIX_FABRIC_COST_MATRIX, &cells, PMIX_DATA_ARRAY);
        } else {
            PMIx_Info_xfer(&out, &in);
        }
    }
    PMIx_Fabric_deregister(&fabric);
    cbfunc(PMIX_SUCCESS, answer->data(), answer->size(), cbdata, release_answer, answer);
    return PMIX_SUCCESS;
}

}  // namespace

void install_fabric(pmix_server_module_t &module) {
    module.fabric = on_fabric;
}

}  // namespace pmixrun
