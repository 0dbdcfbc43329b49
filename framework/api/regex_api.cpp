// PMIx_generate_regex / PMIx_generate_ppn: the C entry points of the node and
// proc map codec (wire/regex.hpp, our own format).
#include <pmix_server.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime/init_state.hpp"
#include "wire/regex.hpp"

namespace {
char *dup_string(const std::string &s) {
    char *out = static_cast<char *>(std::malloc(s.size() + 1));
    if (out != nullptr) std::memcpy(out, s.c_str(), s.size() + 1);
    return out;
}
}  // namespace

extern "C" {

// Both return malloc'd, NUL-terminated strings the caller frees (OPENMPI-CONTRACT §2.4).
// Like OpenPMIx 4.2 (shared/abi/runtime_probe.out.txt) they need an initialized
// library: PMIX_ERR_INIT before that.
PMIX_EXPORT pmix_status_t PMIx_generate_regex(const char *input, char **regex) {
    if (regex == nullptr) return PMIX_ERR_BAD_PARAM;
    *regex = nullptr;
    if (!pmixpp::runtime::any_face_initialized()) return PMIX_ERR_INIT;
    if (input == nullptr) return PMIX_ERR_BAD_PARAM;
    *regex = dup_string(pmixpp::wire::encode_node_map(pmixpp::wire::split_node_list(input)));
    return *regex != nullptr ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
}

PMIX_EXPORT pmix_status_t PMIx_generate_ppn(const char *input, char **ppn) {
    if (ppn == nullptr) return PMIX_ERR_BAD_PARAM;
    *ppn = nullptr;
    if (!pmixpp::runtime::any_face_initialized()) return PMIX_ERR_INIT;
    if (input == nullptr) return PMIX_ERR_BAD_PARAM;
    auto per_node = pmixpp::wire::parse_rank_lists(input);
    if (!per_node) return PMIX_ERR_BAD_PARAM;
    *ppn = dup_string(pmixpp::wire::encode_proc_map(*per_node));
    return *ppn != nullptr ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
}

}  // extern "C"
