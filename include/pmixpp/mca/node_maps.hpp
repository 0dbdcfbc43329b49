// Reading a job's PMIX_NODE_MAP and PMIX_PROC_MAP (the strings
// PMIx_generate_regex / PMIx_generate_ppn make, format "pmixpp:1:", see
// framework/wire/regex.hpp) without expanding them: a proc map of a million
// ranks is a few thousand rank runs, and so is its index.
//
//   node map:  "pmixpp:1:n[2:1-3,7],login"  -> n01,n02,n03,n07,login
//   proc map:  "pmixpp:1:0-3;4-5,9"         -> node 0: 0,1,2,3; node 1: 4,5,9
//
// Header-only, no state: the core's codec (wire/regex.cpp) and the datastore
// (gds_hash, which answers PMIX_HOSTNAME, PMIX_NODEID, PMIX_LOCAL_RANK, ... of
// any rank from the maps) share it. Everything may run on any thread; a
// built MapIndex is read-only.
#pragma once

#include <pmix_common.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pmixpp::mca::maps {

inline constexpr std::string_view kPrefix = "pmixpp:1:";

// Ranks first..last (inclusive).
struct RankRun {
    std::uint32_t first = 0, last = 0;
    bool operator==(const RankRun &) const = default;
};

namespace detail {

inline std::optional<std::uint32_t> number(std::string_view s) {
    std::uint32_t v = 0;
    if (s.empty()) return std::nullopt;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
    return v;
}

// Calls f(item) for each item of `s` separated by `sep` ("" is one empty item).
template <typename F>
bool each_item(std::string_view s, char sep, F &&f) {
    for (;;) {
        const auto pos = s.find(sep);
        if (!f(s.substr(0, pos))) return false;
        if (pos == std::string_view::npos) return true;
        s.remove_prefix(pos + 1);
    }
}

}  // namespace detail

// "0-3,7" -> {0,3},{7,7}; "" -> none. std::nullopt when an item is not a rank
// or a range a-b with a <= b below PMIX_RANK_VALID.
inline std::optional<std::vector<RankRun>> parse_runs(std::string_view s) {
    std::vector<RankRun> out;
    if (s.empty()) return out;
    const bool ok = detail::each_item(s, ',', [&](std::string_view item) {
        const auto dash = item.find('-');
        auto a = detail::number(item.substr(0, dash));
        auto b = dash == std::string_view::npos ? a : detail::number(item.substr(dash + 1));
        if (!a || !b || *a > *b || *b >= PMIX_RANK_VALID) return false;
        out.push_back({*a, *b});
        return true;
    });
    if (!ok) return std::nullopt;
    return out;
}

// The node names of a node map body (after the prefix): "n[2:1-3],login".
// std::nullopt when malformed or over `limit`. `limit` bounds how many names
// the whole map (plain and bracketed) may make: a million nodes is ten times the largest machines,
// and a forged 106-byte map asking for 10^7 names took over 2 GB (fuzz_regex).
inline std::optional<std::vector<std::string>> parse_node_names(std::string_view map,
                                                                std::size_t limit = 1'000'000) {
    std::vector<std::string> out;
    if (map.empty()) return out;
    std::size_t i = 0;
    for (;;) {
        const auto bracket = map.find('[', i);
        const auto comma = map.find(',', i);
        if (bracket == std::string_view::npos ||
            (comma != std::string_view::npos && comma < bracket)) {
            const auto end = comma == std::string_view::npos ? map.size() : comma;
            // Plain names count too: else a map over the limit in plain names
            // decoded while its own encoding (which groups them) did not.
            if (out.size() >= limit) return std::nullopt;
            out.emplace_back(map.substr(i, end - i));
            if (comma == std::string_view::npos) return out;
            i = comma + 1;
            continue;
        }
        const auto close = map.find(']', bracket);
        if (close == std::string_view::npos) return std::nullopt;
        const std::string_view prefix = map.substr(i, bracket - i);
        const std::string_view inner = map.substr(bracket + 1, close - bracket - 1);
        const auto colon = inner.find(':');
        if (colon == std::string_view::npos) return std::nullopt;
        const auto width = detail::number(inner.substr(0, colon));
        const auto runs = parse_runs(inner.substr(colon + 1));
        // An empty range list names no node: malformed (else "[2:]," decoded
        // to one empty name, which encodes to the empty map).
        if (!width || !runs || runs->empty() || *width > 9) return std::nullopt;
        char digits[16];
        for (const RankRun &run : *runs) {
            if (run.last - run.first >= limit - std::min(limit, out.size())) return std::nullopt;
            for (std::uint64_t v = run.first; v <= run.last; ++v) {
                const auto end = std::to_chars(digits, digits + sizeof digits, v).ptr;
                const std::size_t n = static_cast<std::size_t>(end - digits);
                std::string &name = out.emplace_back();
                name.reserve(prefix.size() + std::max<std::size_t>(n, *width));
                name.append(prefix);
                if (n < *width) name.append(*width - n, '0');
                name.append(digits, n);
            }
        }
        i = close + 1;
        if (i == map.size()) return out;
        if (map[i] != ',') return std::nullopt;
        ++i;
    }
}

// One run list per node of a proc map body (after the prefix): "0-3;4-5,9".
inline std::optional<std::vector<std::vector<RankRun>>> parse_proc_runs(std::string_view map) {
    std::vector<std::vector<RankRun>> out;
    const bool ok = detail::each_item(map, ';', [&](std::string_view node) {
        auto runs = parse_runs(node);
        if (!runs) return false;
        out.push_back(std::move(*runs));
        return true;
    });
    if (!ok) return std::nullopt;
    return out;
}

// Where every rank of a job runs, from its two maps: for a rank, its node
// (index in node-map order) and its position among that node's ranks (the
// order the proc map lists them in). Memory: a few words per node and per
// rank run, whatever the number of ranks.
class MapIndex {
  public:
    struct Placement {
        std::uint32_t node = 0;        // index in the node map
        std::uint32_t local_rank = 0;  // position among the node's ranks
    };

    // Both maps in our format ("pmixpp:1:" prefix) or both plain lists
    // ("n1,n2" and "0,1;2,3", as some hosts pass them). std::nullopt when
    // either is malformed, the node counts differ or a rank is on two nodes.
    static std::optional<MapIndex> build(std::string_view node_map, std::string_view proc_map) {
        const bool ours = node_map.starts_with(kPrefix) && proc_map.starts_with(kPrefix);
        if (ours) {
            node_map.remove_prefix(kPrefix.size());
            proc_map.remove_prefix(kPrefix.size());
        } else if (node_map.find_first_of("[]:") != std::string_view::npos ||
                   proc_map.find_first_of("[]:") != std::string_view::npos) {
            return std::nullopt;  // someone else's regex
        }
        auto names = parse_node_names(node_map);
        if (!names) return std::nullopt;
        MapIndex index;
        index.names_ = std::move(*names);
        // The proc map straight into the flat arrays: no vector per node.
        index.node_start_.reserve(index.names_.size() + 1);
        std::uint32_t node = 0, offset = 0;
        index.node_start_.push_back(0);
        const bool ok = detail::each_item(proc_map, ';', [&](std::string_view list) {
            if (node > 0) {
                index.node_start_.push_back(static_cast<std::uint32_t>(index.node_runs_.size()));
                offset = 0;
            }
            ++node;
            if (list.empty()) return true;
            return detail::each_item(list, ',', [&](std::string_view item) {
                const auto dash = item.find('-');
                auto a = detail::number(item.substr(0, dash));
                auto b = dash == std::string_view::npos ? a : detail::number(item.substr(dash + 1));
                if (!a || !b || *a > *b || *b >= PMIX_RANK_VALID) return false;
                index.node_runs_.push_back({*a, *b});
                index.by_rank_.push_back({*a, *b, node - 1, offset});
                offset += *b - *a + 1;
                return true;
            });
        });
        index.node_start_.push_back(static_cast<std::uint32_t>(index.node_runs_.size()));
        if (!ok || node != index.names_.size()) return std::nullopt;
        auto by_first = [](const Run &a, const Run &b) { return a.first < b.first; };
        // Launchers place by block: usually sorted already.
        if (!std::is_sorted(index.by_rank_.begin(), index.by_rank_.end(), by_first))
            std::sort(index.by_rank_.begin(), index.by_rank_.end(), by_first);
        for (std::size_t i = 1; i < index.by_rank_.size(); ++i) {
            if (index.by_rank_[i].first <= index.by_rank_[i - 1].last) return std::nullopt;
        }
        index.by_name_.resize(index.names_.size());
        for (std::uint32_t n = 0; n < index.by_name_.size(); ++n) index.by_name_[n] = n;
        if (!std::is_sorted(index.names_.begin(), index.names_.end())) {
            std::sort(index.by_name_.begin(), index.by_name_.end(),
                      [&](std::uint32_t a, std::uint32_t b) {
                          return index.names_[a] < index.names_[b];
                      });
        }
        return index;
    }

    std::optional<Placement> place(pmix_rank_t rank) const noexcept {
        auto it = std::upper_bound(by_rank_.begin(), by_rank_.end(), rank,
                                   [](pmix_rank_t r, const Run &run) { return r < run.first; });
        if (it == by_rank_.begin()) return std::nullopt;
        --it;
        if (rank > it->last) return std::nullopt;
        return Placement{it->node, it->offset + (rank - it->first)};
    }

    std::size_t num_nodes() const noexcept { return names_.size(); }
    const std::string &node_name(std::uint32_t node) const { return names_.at(node); }

    // The index of the node named `name` (the first one if it repeats).
    std::optional<std::uint32_t> node_named(std::string_view name) const {
        auto it =
            std::lower_bound(by_name_.begin(), by_name_.end(), name,
                             [&](std::uint32_t n, std::string_view v) { return names_[n] < v; });
        if (it == by_name_.end() || names_[*it] != name) return std::nullopt;
        return *it;
    }

    // The node's ranks, in proc-map order.
    std::vector<RankRun> ranks_on(std::uint32_t node) const {
        return {node_runs_.begin() + node_start_.at(node),
                node_runs_.begin() + node_start_.at(node + 1)};
    }
    std::uint32_t count_on(std::uint32_t node) const {
        std::uint32_t n = 0;
        for (const RankRun &run : ranks_on(node)) n += run.last - run.first + 1;
        return n;
    }

  private:
    struct Run {
        std::uint32_t first, last, node, offset;
    };
    std::vector<std::string> names_;         // node-map order
    std::vector<std::uint32_t> by_name_;     // node indices sorted by name
    std::vector<RankRun> node_runs_;         // every node's runs, node after node
    std::vector<std::uint32_t> node_start_;  // node n's runs: [node_start_[n], node_start_[n+1])
    std::vector<Run> by_rank_;               // every run, sorted by first rank
};

}  // namespace pmixpp::mca::maps
