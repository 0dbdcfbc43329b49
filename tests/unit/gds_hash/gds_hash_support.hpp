// Support for the gds_hash tests: load the module the real way (the
// component repository opening build/lib/pmix/pmix_mca_gds_hash.so), build
// registration info arrays, and fetch copies of values.
#pragma once

#include <pmix.h>

#include "pmixpp/mca/gds.hpp"
#include "pmixpp/mca/repository.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gds_hash_test {

namespace mca = pmixpp::mca;
namespace gds = pmixpp::mca::gds;

// The repository over the directory the component was built into, knowing
// only the gds framework (other frameworks' files there are never opened).
class ComponentLoader {
  public:
    static ComponentLoader &instance() {
        static ComponentLoader loader;
        return loader;
    }

    mca::ComponentRepository &repository() { return repo_; }

    // A new module from the component's create_module; the handle keeps the
    // DSO loaded and calls destroy_module.
    mca::ModuleHandle create() {
        for (const auto &record : repo_.components(gds::kFrameworkName)) {
            if (record.component != "hash") continue;
            mca::SelectedComponent selected;
            selected.record = record;
            selected.priority = record.descriptor->default_priority;
            auto handle = repo_.create_module(selected);
            if (handle) return std::move(handle).value();
            ADD_FAILURE() << "create_module failed: " << handle.error().message;
            return {};
        }
        std::string failures;
        for (const auto &f : repo_.failures()) failures += "\n  " + f.message;
        ADD_FAILURE() << "gds_hash not found in " << GDS_HASH_COMPONENT_DIR << failures;
        return {};
    }

  private:
    static mca::RepositoryOptions options() {
        mca::RepositoryOptions o;
        o.search_path = {GDS_HASH_COMPONENT_DIR};
        o.frameworks.clear();
        for (const auto &fw : mca::builtin_frameworks()) {
            if (fw.name == gds::kFrameworkName) o.frameworks.push_back(fw);
        }
        o.include_static = true;  // also works when built with PMIXPP_COMPONENTS_STATIC
        return o;
    }

    ComponentLoader() : params_(mca::ParamSourceConfig{}), repo_(params_, options()) {
        repo_.set_log_problems(false);
        params_.set_log_problems(false);
    }

    mca::ParameterRegistry params_;
    mca::ComponentRepository repo_;
};

inline pmix_proc_t proc(std::string_view nspace, pmix_rank_t rank) {
    pmix_proc_t p{};
    std::memcpy(p.nspace, nspace.data(), std::min(nspace.size(), sizeof(p.nspace) - 1));
    p.rank = rank;
    return p;
}

inline pmix_proc_t job(std::string_view nspace) {
    return proc(nspace, PMIX_RANK_WILDCARD);
}

// pmix_info_t array owning its values (PMIx_Info_load deep-copies).
class Infos {
  public:
    Infos() = default;
    Infos(Infos &&other) noexcept : items_(std::move(other.items_)) { other.items_.clear(); }
    Infos(const Infos &) = delete;
    Infos &operator=(const Infos &) = delete;
    ~Infos() {
        for (auto &i : items_) PMIx_Value_destruct(&i.value);
    }

    // `data` as for PMIx_Info_load: the char* itself for PMIX_STRING, else a
    // pointer to one element.
    Infos &add(const char *key, const void *data, pmix_data_type_t type) {
        pmix_info_t info{};
        EXPECT_EQ(PMIx_Info_load(&info, key, data, type), PMIX_SUCCESS) << key;
        items_.push_back(info);
        return *this;
    }
    Infos &u32(const char *key, std::uint32_t v) { return add(key, &v, PMIX_UINT32); }
    Infos &u16(const char *key, std::uint16_t v) { return add(key, &v, PMIX_UINT16); }
    Infos &rank(const char *key, pmix_rank_t v) { return add(key, &v, PMIX_PROC_RANK); }
    Infos &str(const char *key, const char *v) { return add(key, v, PMIX_STRING); }
    Infos &flag(const char *key) {
        bool t = true;
        return add(key, &t, PMIX_BOOL);
    }
    // `key` = PMIX_DATA_ARRAY of PMIX_INFO holding `members` (deep copy).
    Infos &array(const char *key, const Infos &members) {
        pmix_data_array_t darray{PMIX_INFO, members.items_.size(),
                                 const_cast<pmix_info_t *>(members.items_.data())};
        return add(key, &darray, PMIX_DATA_ARRAY);
    }

    std::span<const pmix_info_t> span() const { return items_; }
    std::size_t size() const { return items_.size(); }

  private:
    std::vector<pmix_info_t> items_;
};

// A copy of a fetched value (the sink copies, as the core does).
struct Fetched {
    pmix_status_t status = PMIX_ERROR;
    pmix_value_t value{};
    Fetched() = default;
    Fetched(const Fetched &) = delete;
    Fetched &operator=(const Fetched &) = delete;
    ~Fetched() { PMIx_Value_destruct(&value); }
    bool ok() const { return status == PMIX_SUCCESS; }
};

inline std::unique_ptr<Fetched> get(const gds::Module &m, const pmix_proc_t &p,
                                    std::string_view key, const Infos &qualifiers = Infos()) {
    auto out = std::make_unique<Fetched>();
    int calls = 0;
    const auto st = m.fetch(p, key, qualifiers.span(), [&](const pmix_value_t &v) {
        ++calls;
        EXPECT_EQ(PMIx_Value_xfer(&out->value, &v), PMIX_SUCCESS);
    });
    out->status = st.code();
    if (st.ok())
        EXPECT_EQ(calls, 1) << "the sink must be called exactly once on success";
    else
        EXPECT_EQ(calls, 0) << "the sink must not be called on failure";
    return out;
}

inline std::uint32_t get_u32(const gds::Module &m, const pmix_proc_t &p, std::string_view key,
                             const Infos &qualifiers = Infos()) {
    auto f = get(m, p, key, qualifiers);
    EXPECT_TRUE(f->ok()) << key << ": " << PMIx_Error_string(f->status);
    EXPECT_EQ(f->value.type, PMIX_UINT32) << key;
    return f->value.data.uint32;
}

inline std::string get_str(const gds::Module &m, const pmix_proc_t &p, std::string_view key,
                           const Infos &qualifiers = Infos()) {
    auto f = get(m, p, key, qualifiers);
    EXPECT_TRUE(f->ok()) << key << ": " << PMIx_Error_string(f->status);
    EXPECT_EQ(f->value.type, PMIX_STRING) << key;
    return f->value.type == PMIX_STRING && f->value.data.string ? f->value.data.string : "";
}

// Packed bytes of a value: equal bytes = equal type and deep contents.
inline std::vector<char> packed(const pmix_value_t &v) {
    pmix_data_buffer_t buf{};
    EXPECT_EQ(PMIx_Data_pack(nullptr, &buf, const_cast<pmix_value_t *>(&v), 1, PMIX_VALUE),
              PMIX_SUCCESS);
    std::vector<char> bytes(buf.base_ptr, buf.base_ptr + buf.bytes_used);
    PMIX_DATA_BUFFER_DESTRUCT(&buf);
    return bytes;
}

// Every key fetch_all() reports, with a copy of its value's packed bytes.
// Only the realm arrays (one per app, one per node) may repeat; `repeats`
// counts how often each key came.
inline std::map<std::string, std::vector<char>> all_keys(
    const gds::Module &m, const pmix_proc_t &p, pmix_status_t *status = nullptr,
    std::map<std::string, int> *repeats = nullptr) {
    std::map<std::string, std::vector<char>> out;
    std::map<std::string, int> seen;
    const auto st = m.fetch_all(p, [&](std::string_view key, const pmix_value_t &v) {
        const std::string k(key);
        if (k != PMIX_APP_INFO_ARRAY && k != PMIX_NODE_INFO_ARRAY) {
            EXPECT_FALSE(out.contains(k)) << "key reported twice: " << key;
        }
        out[k] = packed(v);
        ++seen[k];
    });
    if (repeats) *repeats = seen;
    if (status) *status = st.code();
    return out;
}

inline pmix_value_t u32_value(std::uint32_t v) {
    pmix_value_t value{};
    value.type = PMIX_UINT32;
    value.data.uint32 = v;
    return value;
}

// Fixture: a fresh module per test, loaded from the DSO.
class GdsHash : public ::testing::Test {
  protected:
    void SetUp() override {
        handle_ = ComponentLoader::instance().create();
        ASSERT_TRUE(handle_);
        m = handle_.as<gds::Module>();
    }
    // A second, independent module (the other end of a blob).
    gds::Module &peer() {
        if (!peer_) peer_ = ComponentLoader::instance().create();
        return *peer_.as<gds::Module>();
    }

    gds::Module *m = nullptr;

  private:
    mca::ModuleHandle handle_;
    mca::ModuleHandle peer_;
};

}  // namespace gds_hash_test
