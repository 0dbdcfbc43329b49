#include "wire/attribute_support.hpp"

#include <cstdlib>
#include <cstring>

namespace pmixpp::wire {

namespace {

bool flag_true(const pmix_info_t &i) {
    return i.value.type == PMIX_UNDEF || (i.value.type == PMIX_BOOL && i.value.data.flag);
}

std::set<std::string> split(const std::string &s) {
    std::set<std::string> out;
    std::size_t start = 0;
    while (start <= s.size()) {
        auto pos = s.find(',', start);
        if (pos == std::string::npos) pos = s.size();
        std::string item = s.substr(start, pos - start);
        while (!item.empty() && item.front() == ' ') item.erase(item.begin());
        while (!item.empty() && item.back() == ' ') item.pop_back();
        if (!item.empty()) out.insert(item);
        start = pos + 1;
    }
    return out;
}

// A malloc'd DATA_ARRAY value in `i` (takes `array`).
void load_array(pmix_info_t &i, pmix_data_type_t type, void *array, std::size_t n) {
    auto *d = static_cast<pmix_data_array_t *>(std::calloc(1, sizeof(pmix_data_array_t)));
    d->type = type;
    d->size = n;
    d->array = n > 0 ? array : nullptr;
    if (n == 0) std::free(array);
    i.value.type = PMIX_DATA_ARRAY;
    i.value.data.darray = d;
}

char **one_line(const std::string &s) {
    auto **argv = static_cast<char **>(std::calloc(2, sizeof(char *)));
    argv[0] = strdup(s.c_str());
    return argv;
}

}  // namespace

std::optional<std::set<std::string>> asked_functions(std::span<const pmix_info_t> qualifiers,
                                                     const char *level_key) {
    for (const auto &i : qualifiers) {
        if (!PMIX_CHECK_KEY(&i, level_key)) continue;
        if (i.value.type == PMIX_STRING && i.value.data.string != nullptr) {
            auto names = split(i.value.data.string);
            if (names.count("all") != 0) return std::set<std::string>{};
            return names;
        }
        if (flag_true(i)) return std::set<std::string>{};
        return std::nullopt;
    }
    return std::nullopt;
}

bool asked_function_list(std::span<const pmix_info_t> qualifiers, const char *functions_key) {
    for (const auto &i : qualifiers) {
        if (PMIX_CHECK_KEY(&i, functions_key)) return flag_true(i);
    }
    return false;
}

pmix_info_t level_entry(const char *level_key, const std::vector<FunctionAttributes> &functions,
                        const std::set<std::string> &which) {
    std::vector<const FunctionAttributes *> chosen;
    for (const auto &f : functions) {
        if (which.empty() || which.count(f.function) != 0) chosen.push_back(&f);
    }
    auto *fns = static_cast<pmix_info_t *>(std::calloc(chosen.size() + 1, sizeof(pmix_info_t)));
    for (std::size_t k = 0; k < chosen.size(); ++k) {
        const auto &attrs = chosen[k]->attributes;
        auto *regs =
            static_cast<pmix_regattr_t *>(std::calloc(attrs.size() + 1, sizeof(pmix_regattr_t)));
        for (std::size_t a = 0; a < attrs.size(); ++a) {
            regs[a].name = strdup(attrs[a].name.c_str());
            std::strncpy(regs[a].string, attrs[a].key.c_str(), PMIX_MAX_KEYLEN);
            regs[a].type = attrs[a].type;
            if (!attrs[a].description.empty()) regs[a].description = one_line(attrs[a].description);
        }
        std::strncpy(fns[k].key, chosen[k]->function.c_str(), PMIX_MAX_KEYLEN);
        load_array(fns[k], PMIX_REGATTR, regs, attrs.size());
    }
    pmix_info_t out;
    std::memset(&out, 0, sizeof out);
    std::strncpy(out.key, level_key, PMIX_MAX_KEYLEN);
    load_array(out, PMIX_INFO, fns, chosen.size());
    return out;
}

pmix_info_t function_list_entry(const char *functions_key, const std::vector<std::string> &names) {
    std::string all;
    for (const auto &n : names) all += (all.empty() ? "" : ",") + n;
    pmix_info_t out;
    std::memset(&out, 0, sizeof out);
    std::strncpy(out.key, functions_key, PMIX_MAX_KEYLEN);
    out.value.type = PMIX_STRING;
    out.value.data.string = strdup(all.c_str());
    return out;
}

}  // namespace pmixpp::wire
