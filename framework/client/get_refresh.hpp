// PMIX_GET_REFRESH_CACHE (Chap_API_KV_Mgmt): a Get that asks the server for
// a remote process's data again instead of answering from this process's
// cache, so that a key the process re-put and committed since is read new.
// Our own data and our own job's job-level keys are always current here
// (Client::should_ask_server), so the directive changes nothing for them.
#pragma once

#include <pmix_common.h>

#include <span>

#include "pmixpp/mca/info.hpp"

namespace pmixpp::client {

inline bool refresh_cache_requested(std::span<const pmix_info_t> info) {
    const pmix_info_t *i = mca::find_info(info, PMIX_GET_REFRESH_CACHE);
    return i != nullptr && mca::info_true(*i);
}

}  // namespace pmixpp::client
