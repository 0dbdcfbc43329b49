// The gds_hash component: descriptor, query and module factory.
//
// Always usable: it needs nothing from the host. The one module of the gds
// framework unless a component of higher priority is installed.
#include "hash_store.hpp"

#include "pmixpp/mca/component.hpp"
#include "pmixpp/mca/gds.hpp"

#include <unistd.h>

#include <climits>
#include <new>
#include <string>

namespace {

// This node's name as gethostname() reports it: node-realm keys asked without
// a node qualifier resolve to the job's node of that name.
std::string local_hostname() {
    char name[HOST_NAME_MAX + 1] = {};
    if (gethostname(name, sizeof(name) - 1) != 0) return {};
    return name;
}

void query(const pmixpp_mca_query_context_t *context, pmixpp_mca_query_result_t *result) {
    pmixpp::mca::report_usable(result, context->priority);
}

void *create_module(const pmixpp_mca_query_context_t *) {
    auto *module = new (std::nothrow) pmixpp::gds_hash::HashStore(local_hostname());
    return static_cast<pmixpp::mca::gds::Module *>(module);
}

void destroy_module(void *module) {
    delete static_cast<pmixpp::mca::gds::Module *>(module);
}

}  // namespace

// Version 1.0.0, default priority 50; no parameters of its own.
PMIXPP_MCA_COMPONENT(gds, hash, 1, 0, 0, 50, nullptr, query, create_module, destroy_module);
