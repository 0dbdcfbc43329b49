#include "groups.hpp"

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <vector>

namespace pmixrun {

namespace {

// Context ids start well away from the library's own (1, 2, ...), so a test
// can tell who assigned one.
std::atomic<std::size_t> next_context_id{1000};

struct Answer {
    std::vector<pmix_info_t> info;
};

void release_answer(void *cbdata) {
    auto *a = static_cast<Answer *>(cbdata);
    for (auto &i : a->info) PMIX_INFO_DESTRUCT(&i);
    delete a;
}

pmix_status_t group_upcall(pmix_group_operation_t op, char grp[], const pmix_proc_t[], size_t,
                           const pmix_info_t directives[], size_t ndirs, pmix_info_cbfunc_t cbfunc,
                           void *cbdata) {
    if (op == PMIX_GROUP_DESTRUCT) return PMIX_OPERATION_SUCCEEDED;  // nothing kept here
    if (op != PMIX_GROUP_CONSTRUCT) return PMIX_ERR_NOT_SUPPORTED;
    auto *a = new Answer;
    bool assign = false;
    for (size_t i = 0; i < ndirs; ++i) {
        if (PMIX_CHECK_KEY(&directives[i], PMIX_GROUP_ASSIGN_CONTEXT_ID))
            assign = PMIX_INFO_TRUE(&directives[i]);
        if (PMIX_CHECK_KEY(&directives[i], PMIX_GROUP_ENDPT_DATA)) {
            // The only server of the job: its contribution is all there is.
            a->info.emplace_back();
            PMIX_INFO_CONSTRUCT(&a->info.back());
            PMIx_Info_xfer(&a->info.back(), &directives[i]);
        }
    }
    if (assign) {
        const std::size_t cid = next_context_id++;
        a->info.emplace_back();
        PMIX_INFO_CONSTRUCT(&a->info.back());
        PMIX_INFO_LOAD(&a->info.back(), PMIX_GROUP_CONTEXT_ID, &cid, PMIX_SIZE);
        std::fprintf(stderr, "pmixrun: group %s gets context id %zu\n", grp, cid);
    }
    cbfunc(PMIX_SUCCESS, a->info.empty() ? nullptr : a->info.data(), a->info.size(), cbdata,
           release_answer, a);
    return PMIX_SUCCESS;
}

}  // namespace

void install_group_services(pmix_server_module_t &module) {
    module.group = group_upcall;
}

}  // namespace pmixrun
