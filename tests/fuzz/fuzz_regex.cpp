// libFuzzer target: the PMIX_NODE_MAP / PMIX_PROC_MAP parser (wire/regex.hpp),
// which PMIx_Resolve_nodes/peers and every Get of the maps run on strings a
// host or a peer supplied, and the PMIx_generate_regex/ppn input parsers.
// Whatever decodes must encode back to a string that decodes to the same value.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "wire/regex.hpp"

using namespace pmixpp::wire;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::string_view in(reinterpret_cast<const char *>(data), size);
    if (auto nodes = decode_node_map(in)) {
        auto again = decode_node_map(encode_node_map(*nodes));
        if (!again || *again != *nodes) std::abort();
    }
    if (auto procs = decode_proc_map(in)) {
        auto again = decode_proc_map(encode_proc_map(*procs));
        if (!again || *again != *procs) std::abort();
    }
    (void)split_node_list(in);
    (void)parse_rank_lists(in);
    return 0;
}
