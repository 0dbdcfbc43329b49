// PMIx_generate_regex / PMIx_generate_ppn: our own compact, self-describing
// format for PMIX_NODE_MAP and PMIX_PROC_MAP, and its parser.
//
//   node map:  "pmixpp:1:n[2:1-3,7],login"  -> n01,n02,n03,n07,login
//   proc map:  "pmixpp:1:0-3;4-5,9"         -> node 0: 0,1,2,3; node 1: 4,5,9
//
// A node-map item is either a plain name or prefix[width:ranges] where each
// number is zero-padded to `width` digits (width 0: no padding). Names keep
// their order. A proc-map is one rank list per node, in node-map order,
// separated by ';', each a comma list of ranks and ranges a-b.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pmixpp::wire {

inline constexpr std::string_view kMapPrefix = "pmixpp:1:";

// What a decoder may make of a map, so that a few bytes cannot make it allocate
// gigabytes: a million node names (ten times the largest machines) and ten
// million ranks. A map over a bound does not decode (std::nullopt). The
// fuzz target passes smaller ones (docs/fuzzing.md).
inline constexpr std::size_t kMaxNodeNames = 1'000'000;
inline constexpr std::size_t kMaxExpandedRanks = 10'000'000;

std::string encode_node_map(const std::vector<std::string> &nodes);
std::string encode_proc_map(const std::vector<std::vector<unsigned>> &ranks_per_node);
// std::nullopt for anything that is not our format.
std::optional<std::vector<std::string>> decode_node_map(std::string_view map,
                                                        std::size_t max_names = kMaxNodeNames);
std::optional<std::vector<std::vector<unsigned>>> decode_proc_map(
    std::string_view map, std::size_t max_ranks = kMaxExpandedRanks);

// The inputs of PMIx_generate_regex / PMIx_generate_ppn (api/regex_api.cpp):
// "n1,n2,n3" -> names ("" -> none); "0-3;4,5" -> one rank list per node
// (std::nullopt when a list is not ranks and ranges a-b, or when all the
// lists together hold more than `max_ranks` ranks).
std::vector<std::string> split_node_list(std::string_view list);
std::optional<std::vector<std::vector<unsigned>>> parse_rank_lists(
    std::string_view lists, std::size_t max_ranks = kMaxExpandedRanks);

}  // namespace pmixpp::wire
