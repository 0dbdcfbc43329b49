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

// The decoders' bounds (kMaxNodeNames, kMaxExpandedRanks) are smaller here:
// their cost is linear in what a map expands to, and with the real bounds the
// fuzzer spent its time making maps of 10^6 names (0.65 s an input under ASan,
// ~300 inputs/s) instead of exploring the parser. A bound is the same code
// path whatever its value; the unit tests check the real ones.
namespace {
constexpr std::size_t kFuzzMaxNames = 4096;
constexpr std::size_t kFuzzMaxRanks = 4096;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::string_view in(reinterpret_cast<const char *>(data), size);
    if (auto nodes = decode_node_map(in, kFuzzMaxNames)) {
        auto again = decode_node_map(encode_node_map(*nodes), kFuzzMaxNames);
        if (!again || *again != *nodes) std::abort();
    }
    if (auto procs = decode_proc_map(in, kFuzzMaxRanks)) {
        auto again = decode_proc_map(encode_proc_map(*procs), kFuzzMaxRanks);
        if (!again || *again != *procs) std::abort();
    }
    (void)split_node_list(in);
    (void)parse_rank_lists(in, kFuzzMaxRanks);
    return 0;
}
