#include "allocation.hpp"

#include "launcher.hpp"

#include <pmix.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace pmixrun {
namespace {

struct Results {
    std::vector<pmix_info_t> info;
    ~Results() {
        for (auto &i : info) PMIx_Value_destruct(&i.value);
    }
};

void release_results(void *cbdata) {
    delete static_cast<Results *>(cbdata);
}

// Keys that ask for resources (Chap_API_Job_Mgmt, "Job Allocation attributes").
bool asks_for_resources(const pmix_info_t &i) {
    for (const char *k :
         {PMIX_ALLOC_NUM_NODES, PMIX_ALLOC_NODE_LIST, PMIX_ALLOC_NUM_CPUS, PMIX_ALLOC_NUM_CPU_LIST,
          PMIX_ALLOC_CPU_LIST, PMIX_ALLOC_MEM_SIZE, PMIX_ALLOC_TIME, PMIX_ALLOC_FABRIC,
          PMIX_ALLOC_BANDWIDTH, PMIX_ALLOC_FABRIC_QOS, PMIX_ALLOC_FABRIC_TYPE,
          PMIX_ALLOC_FABRIC_PLANE, PMIX_ALLOC_FABRIC_ENDPTS, PMIX_ALLOC_FABRIC_ENDPTS_NODE,
          PMIX_ALLOC_FABRIC_SEC_KEY}) {
        if (PMIX_CHECK_KEY(&i, k)) return true;
    }
    return false;
}

pmix_status_t on_allocate(const pmix_proc_t *client, pmix_alloc_directive_t directive,
                          const pmix_info_t data[], size_t ndata, pmix_info_cbfunc_t cbfunc,
                          void *cbdata) {
    if (cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    bool resources = false;
    std::string req_id;
    for (size_t i = 0; data != nullptr && i < ndata; ++i) {
        if (asks_for_resources(data[i])) resources = true;
        if (PMIX_CHECK_KEY(&data[i], PMIX_ALLOC_REQ_ID) && data[i].value.type == PMIX_STRING &&
            data[i].value.data.string != nullptr)
            req_id = data[i].value.data.string;
    }
    pmix_status_t status = PMIX_ERR_NOT_SUPPORTED;
    std::string reason;
    switch (directive) {
        case PMIX_ALLOC_NEW:
            reason =
                "pmixrun has no scheduler: it cannot make a new allocation (its own is "
                "this node)";
            break;
        case PMIX_ALLOC_EXTEND:
            if (resources) {
                reason =
                    "pmixrun's allocation is this node and cannot grow in nodes, CPUs, "
                    "memory, fabric or time";
            } else {
                status = PMIX_SUCCESS;  // nothing asked: the current allocation
            }
            break;
        case PMIX_ALLOC_RELEASE:
            reason = "pmixrun holds this node until the job ends: nothing can be released";
            break;
        case PMIX_ALLOC_REAQUIRE:
            reason = "pmixrun lent nothing back to a scheduler: nothing to reacquire";
            break;
        default:
            reason = "pmixrun knows no allocation directive " + std::to_string(directive);
            break;
    }
    auto *r = new Results;
    auto add = [r](const char *key, const void *v, pmix_data_type_t t) {
        r->info.emplace_back();
        std::memset(&r->info.back(), 0, sizeof(pmix_info_t));
        PMIx_Info_load(&r->info.back(), key, v, t);
    };
    const std::string id = "pmixrun." + std::to_string(getpid());
    const std::string host = hostname();
    const std::uint64_t nodes = 1;
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    const std::uint64_t cpus = online > 0 ? static_cast<std::uint64_t>(online) : 1;
    add(PMIX_ALLOC_ID, id.c_str(), PMIX_STRING);
    add(PMIX_ALLOC_NODE_LIST, host.c_str(), PMIX_STRING);
    add(PMIX_ALLOC_NUM_NODES, &nodes, PMIX_UINT64);
    add(PMIX_ALLOC_NUM_CPUS, &cpus, PMIX_UINT64);
    if (!req_id.empty()) add(PMIX_ALLOC_REQ_ID, req_id.c_str(), PMIX_STRING);
    if (!reason.empty()) {
        add(PMIX_EVENT_TEXT_MESSAGE, reason.c_str(), PMIX_STRING);
        std::fprintf(stderr, "pmixrun: allocation request of rank %u refused: %s\n",
                     client != nullptr ? client->rank : PMIX_RANK_UNDEF, reason.c_str());
    }
    cbfunc(status, r->info.data(), r->info.size(), cbdata, release_results, r);
    return PMIX_SUCCESS;
}

}  // namespace

void install_allocation(pmix_server_module_t &module) {
    module.allocate = on_allocate;
}

}  // namespace pmixrun
