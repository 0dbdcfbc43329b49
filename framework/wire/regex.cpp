#include "wire/regex.hpp"

#include "pmixpp/mca/node_maps.hpp"

#include <charconv>
#include <cstdint>

namespace pmixpp::wire {

namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    for (;;) {
        auto pos = s.find(sep, start);
        out.push_back(s.substr(start, pos == std::string_view::npos ? pos : pos - start));
        if (pos == std::string_view::npos) return out;
        start = pos + 1;
    }
}

std::optional<unsigned> number(std::string_view s) {
    unsigned v = 0;
    if (s.empty()) return std::nullopt;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
    return v;
}

// Comma list of ranks/ranges "0-3,7" (each range a-b with a <= b). `budget`
// is how many more ranks the caller's lists may hold; it shrinks by this
// list's. Without it a kilobyte of "0-9999999," items made 10^9 ranks (4 GB).
std::optional<std::vector<unsigned>> ranges(std::string_view s, std::size_t &budget) {
    std::vector<unsigned> out;
    if (s.empty()) return out;
    for (auto item : split(s, ',')) {
        auto dash = item.find('-');
        auto a = number(item.substr(0, dash));
        auto b = dash == std::string_view::npos ? a : number(item.substr(dash + 1));
        if (!a || !b || *a > *b) return std::nullopt;
        const std::uint64_t n = std::uint64_t{*b} - *a + 1;
        if (n > budget) return std::nullopt;
        budget -= static_cast<std::size_t>(n);
        for (std::uint64_t v = *a; v <= *b; ++v) out.push_back(static_cast<unsigned>(v));
    }
    return out;
}

std::string ranges_text(const std::vector<unsigned> &v) {
    std::string out;
    for (std::size_t i = 0; i < v.size();) {
        std::size_t j = i;
        while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
        if (!out.empty()) out += ',';
        out += std::to_string(v[i]);
        if (j > i) out += "-" + std::to_string(v[j]);
        i = j + 1;
    }
    return out;
}

// "n012" -> prefix "n", number 12, width 3; names without a trailing number
// (or whose prefix contains our syntax characters) stay plain.
struct Split {
    std::string prefix;
    unsigned value = 0;
    std::size_t width = 0;
    bool numbered = false;
};
Split split_name(const std::string &name) {
    Split s;
    std::size_t end = name.size();
    std::size_t start = end;
    while (start > 0 && name[start - 1] >= '0' && name[start - 1] <= '9') --start;
    s.prefix = name.substr(0, start);
    if (start == end || end - start > 9 || s.prefix.find_first_of("[],:") != std::string::npos) {
        s.prefix = name;
        return s;
    }
    s.value = static_cast<unsigned>(std::strtoul(name.c_str() + start, nullptr, 10));
    s.width = end - start;
    // Without zero padding, width is whatever the number needs.
    if (name[start] != '0' || s.width == 1) s.width = 0;
    s.numbered = true;
    return s;
}

}  // namespace

std::string encode_node_map(const std::vector<std::string> &nodes) {
    std::string out(kMapPrefix);
    bool first = true;
    for (std::size_t i = 0; i < nodes.size();) {
        Split s = split_name(nodes[i]);
        std::size_t j = i + 1;
        std::vector<unsigned> values{s.value};
        if (s.numbered) {
            while (j < nodes.size()) {
                Split t = split_name(nodes[j]);
                if (!t.numbered || t.prefix != s.prefix || t.width != s.width ||
                    t.value <= values.back()) {
                    break;
                }
                values.push_back(t.value);
                ++j;
            }
        }
        if (!first) out += ',';
        first = false;
        if (s.numbered && j - i > 1) {
            out += s.prefix + "[" + std::to_string(s.width) + ":" + ranges_text(values) + "]";
        } else {
            out += nodes[i];
            j = i + 1;
        }
        i = j;
    }
    return out;
}

std::string encode_proc_map(const std::vector<std::vector<unsigned>> &ranks_per_node) {
    std::string out(kMapPrefix);
    for (std::size_t i = 0; i < ranks_per_node.size(); ++i) {
        if (i > 0) out += ';';
        out += ranges_text(ranks_per_node[i]);
    }
    return out;
}

std::optional<std::vector<std::string>> decode_node_map(std::string_view map,
                                                        std::size_t max_names) {
    if (!map.starts_with(kMapPrefix)) return std::nullopt;
    return mca::maps::parse_node_names(map.substr(kMapPrefix.size()), max_names);
}

std::optional<std::vector<std::vector<unsigned>>> decode_proc_map(std::string_view map,
                                                                  std::size_t max_ranks) {
    if (!map.starts_with(kMapPrefix)) return std::nullopt;
    auto runs = mca::maps::parse_proc_runs(map.substr(kMapPrefix.size()));
    if (!runs) return std::nullopt;
    std::vector<std::vector<unsigned>> out;
    std::uint64_t total = 0;
    for (const auto &node : *runs) {
        auto &ranks = out.emplace_back();
        for (const auto &run : node) {
            total += run.last - run.first + 1;
            if (total > max_ranks) return std::nullopt;
            for (std::uint64_t v = run.first; v <= run.last; ++v)
                ranks.push_back(static_cast<unsigned>(v));
        }
    }
    return out;
}

std::vector<std::string> split_node_list(std::string_view list) {
    std::vector<std::string> nodes;
    if (list.empty()) return nodes;
    for (auto n : split(list, ',')) nodes.emplace_back(n);
    return nodes;
}

std::optional<std::vector<std::vector<unsigned>>> parse_rank_lists(std::string_view lists,
                                                                   std::size_t max_ranks) {
    std::vector<std::vector<unsigned>> per_node;
    std::size_t budget = max_ranks;
    for (auto node : split(lists, ';')) {
        auto r = ranges(node, budget);
        if (!r) return std::nullopt;
        per_node.push_back(std::move(*r));
    }
    return per_node;
}

}  // namespace pmixpp::wire
