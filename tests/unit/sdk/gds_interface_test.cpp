// gds: the datastore. MapStore keeps values in maps and serializes blobs as
// text lines; enough to show the contract: exact types back, scopes and commit
// decide what a modex blob carries, readers are const.
#include "pmixpp/mca/gds.hpp"

#include "pmix_values.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <variant>
#include <vector>

namespace {

namespace gds = pmixpp::mca::gds;
using pmixpp::mca::KeyValueSink;
using pmixpp::mca::Result;
using pmixpp::mca::Status;
using pmixpp::test::make_proc;

class MapStore final : public gds::Module {
  public:
    Status register_job(std::string_view nspace, std::span<const pmix_info_t> info) override {
        for (const pmix_info_t &item : info) {
            auto value = from_pmix(item.value);
            if (!value)
                return Status(PMIX_ERR_BAD_PARAM, std::string("unsupported type for ") + item.key);
            slot(make_proc(nspace, PMIX_RANK_WILDCARD))[item.key] = {PMIX_GLOBAL, true, *value};
        }
        return Status::success();
    }

    Status store(const pmix_proc_t &proc, pmix_scope_t scope, std::string_view key,
                 const pmix_value_t &value) override {
        auto data = from_pmix(value);
        if (!data) return Status(PMIX_ERR_BAD_PARAM, "unsupported type");
        slot(proc)[std::string(key)] = {scope, false, *data};
        return Status::success();
    }

    Status commit(const pmix_proc_t &proc) override {
        for (auto &[key, entry] : slot(proc)) entry.committed = true;
        return Status::success();
    }

    Status store_modex(const pmix_proc_t &proc, std::span<const std::byte> blob) override {
        auto parsed = parse(blob);
        if (!parsed) return Status(PMIX_ERR_UNPACK_FAILURE, "not a map-store blob");
        for (auto &[key, entry] : *parsed) slot(proc)[key] = entry;
        return Status::success();
    }

    Status store_job(std::string_view nspace, std::span<const std::byte> blob) override {
        return store_modex(make_proc(nspace, PMIX_RANK_WILDCARD), blob);
    }

    Status delete_job(std::string_view nspace) override {
        jobs_.erase(std::string(nspace));
        return Status::success();
    }

    Status fetch(const pmix_proc_t &proc, std::string_view key,
                 std::span<const pmix_info_t> qualifiers,
                 const gds::ValueSink &found) const override {
        (void)qualifiers;  // one value per key here
        const auto *values = find(proc);
        if (values == nullptr) return Status(PMIX_ERR_NOT_FOUND, "");
        const auto entry = values->find(key);
        if (entry == values->end()) return Status(PMIX_ERR_NOT_FOUND, "");
        found(to_pmix(entry->second.data));
        return Status::success();
    }

    Status fetch_all(const pmix_proc_t &proc, const KeyValueSink &each) const override {
        const auto *values = find(proc);
        if (values == nullptr) return Status(PMIX_ERR_NOT_FOUND, "");
        for (const auto &[key, entry] : *values) {
            each(key, to_pmix(entry.data));
        }
        return Status::success();
    }

    Result<gds::Blob> assemble_modex(const pmix_proc_t &proc,
                                     pmix_scope_t audience) const override {
        if (audience != PMIX_LOCAL && audience != PMIX_REMOTE) {
            return Status(PMIX_ERR_BAD_PARAM, "audience must be PMIX_LOCAL or PMIX_REMOTE");
        }
        Values selected;
        if (const auto *values = find(proc)) {
            for (const auto &[key, entry] : *values) {
                if (entry.committed && (entry.scope == audience || entry.scope == PMIX_GLOBAL)) {
                    selected[key] = entry;
                }
            }
        }
        return serialize(selected);
    }

    Result<gds::Blob> assemble_job(std::string_view nspace) const override {
        const auto *values = find(make_proc(nspace, PMIX_RANK_WILDCARD));
        if (values == nullptr) return Status(PMIX_ERR_NOT_FOUND, "job not registered");
        return serialize(*values);
    }

    Result<gds::Blob> assemble_modex_pending(const pmix_proc_t &proc,
                                             pmix_scope_t audience) const override {
        Values selected;
        if (const auto *values = find(proc)) {
            for (const auto &[key, entry] : *values) {
                if (!entry.committed && (entry.scope == audience || entry.scope == PMIX_GLOBAL))
                    selected[key] = entry;
            }
        }
        return serialize(selected);
    }

    Result<gds::Blob> assemble_modex_scope(const pmix_proc_t &proc, pmix_scope_t scope,
                                           bool pending) const override {
        Values selected;
        if (const auto *values = find(proc)) {
            for (const auto &[key, entry] : *values) {
                if (entry.committed != pending && entry.scope == scope) selected[key] = entry;
            }
        }
        return serialize(selected);
    }

  private:
    using Data = std::variant<std::uint16_t, std::uint32_t, std::string>;
    struct Entry {
        pmix_scope_t scope;
        bool committed;
        Data data;
    };
    using Values = std::map<std::string, Entry, std::less<>>;
    static constexpr std::string_view kMagic = "map-store/1";

    static std::optional<Data> from_pmix(const pmix_value_t &value) {
        switch (value.type) {
            case PMIX_UINT16:
                return Data(value.data.uint16);
            case PMIX_UINT32:
                return Data(value.data.uint32);
            case PMIX_STRING:
                return Data(std::string(value.data.string));
            default:
                return std::nullopt;
        }
    }

    // Borrowed view of a stored value: the string points into the store.
    static pmix_value_t to_pmix(const Data &data) {
        pmix_value_t value{};
        if (const auto *u16 = std::get_if<std::uint16_t>(&data)) {
            value.type = PMIX_UINT16;
            value.data.uint16 = *u16;
        } else if (const auto *u32 = std::get_if<std::uint32_t>(&data)) {
            value.type = PMIX_UINT32;
            value.data.uint32 = *u32;
        } else {
            value.type = PMIX_STRING;
            value.data.string = const_cast<char *>(std::get<std::string>(data).c_str());
        }
        return value;
    }

    static gds::Blob serialize(const Values &values) {
        std::ostringstream out;
        out << kMagic << '\n';
        for (const auto &[key, entry] : values) {
            out << key << ' ' << int(entry.scope) << ' ' << entry.data.index() << ' ';
            std::visit([&](const auto &v) { out << v; }, entry.data);
            out << '\n';
        }
        const std::string text = out.str();
        const auto *bytes = reinterpret_cast<const std::byte *>(text.data());
        return gds::Blob(bytes, bytes + text.size());
    }

    static std::optional<Values> parse(std::span<const std::byte> blob) {
        std::istringstream in(
            std::string(reinterpret_cast<const char *>(blob.data()), blob.size()));
        std::string line;
        if (!std::getline(in, line) || line != kMagic) return std::nullopt;
        Values values;
        std::string key, text;
        int scope = 0;
        std::size_t index = 0;
        while (in >> key >> scope >> index >> text) {
            Data data = index == 0   ? Data(std::uint16_t(std::stoul(text)))
                        : index == 1 ? Data(std::uint32_t(std::stoul(text)))
                                     : Data(text);
            values[key] = {pmix_scope_t(scope), true, data};
        }
        return values;
    }

    Values &slot(const pmix_proc_t &proc) { return jobs_[proc.nspace][proc.rank]; }
    const Values *find(const pmix_proc_t &proc) const {
        const auto job = jobs_.find(proc.nspace);
        if (job == jobs_.end()) return nullptr;
        const auto values = job->second.find(proc.rank);
        return values == job->second.end() ? nullptr : &values->second;
    }

    std::map<std::string, std::map<pmix_rank_t, Values>, std::less<>> jobs_;
};

std::unique_ptr<gds::Module> create_module() {
    return std::make_unique<MapStore>();
}

// What fetch() reported: the sink must copy, the value is borrowed.
struct Fetched {
    Status status;
    int calls = 0;
    pmix_data_type_t type = PMIX_UNDEF;
    std::uint32_t number = 0;
    std::string text;
};

Fetched fetch(const gds::Module &module, const pmix_proc_t &proc, std::string_view key) {
    Fetched out;
    out.status = module.fetch(proc, key, {}, [&](const pmix_value_t &value) {
        ++out.calls;
        out.type = value.type;
        if (value.type == PMIX_UINT16) out.number = value.data.uint16;
        if (value.type == PMIX_UINT32) out.number = value.data.uint32;
        if (value.type == PMIX_STRING) out.text = value.data.string;
    });
    return out;
}

const pmix_proc_t kRank0 = make_proc("job1", 0);

TEST(GdsModule, FetchGivesBackTheExactTypeThatWasStored) {
    const auto module = create_module();
    ASSERT_TRUE(
        module->store(kRank0, PMIX_GLOBAL, "port", pmixpp::test::make_value_u16(4711)).ok());
    ASSERT_TRUE(
        module->store(kRank0, PMIX_GLOBAL, "host", pmixpp::test::make_value_string("n01")).ok());

    const Fetched port = fetch(*module, kRank0, "port");
    ASSERT_TRUE(port.status.ok());
    EXPECT_EQ(port.calls, 1);
    EXPECT_EQ(port.type, PMIX_UINT16);
    EXPECT_EQ(port.number, 4711u);

    const Fetched host = fetch(*module, kRank0, "host");
    ASSERT_TRUE(host.status.ok());
    EXPECT_EQ(host.type, PMIX_STRING);
    EXPECT_EQ(host.text, "n01");
}

TEST(GdsModule, FetchOfAMissingKeyIsNotFoundAndNeverCallsTheSink) {
    const auto module = create_module();
    ASSERT_TRUE(module->store(kRank0, PMIX_GLOBAL, "port", pmixpp::test::make_value_u16(1)).ok());
    const Fetched missing_key = fetch(*module, kRank0, "nope");
    EXPECT_EQ(missing_key.status.code(), PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(missing_key.calls, 0);
    const Fetched missing_proc = fetch(*module, make_proc("job9", 3), "port");
    EXPECT_EQ(missing_proc.status.code(), PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(missing_proc.calls, 0);
}

TEST(GdsModule, OwnValuesAreVisibleBeforeCommit) {
    const auto module = create_module();
    ASSERT_TRUE(module->store(kRank0, PMIX_REMOTE, "ep", pmixpp::test::make_value_u16(9)).ok());
    EXPECT_TRUE(fetch(*module, kRank0, "ep").status.ok());
}

// Puts one value per scope, commits, then puts one more that stays uncommitted.
void put_one_value_per_scope(gds::Module &module) {
    using pmixpp::test::make_value_u16;
    ASSERT_TRUE(module.store(kRank0, PMIX_LOCAL, "local", make_value_u16(1)).ok());
    ASSERT_TRUE(module.store(kRank0, PMIX_REMOTE, "remote", make_value_u16(2)).ok());
    ASSERT_TRUE(module.store(kRank0, PMIX_GLOBAL, "global", make_value_u16(3)).ok());
    ASSERT_TRUE(module.store(kRank0, PMIX_INTERNAL, "internal", make_value_u16(4)).ok());
    ASSERT_TRUE(module.commit(kRank0).ok());
    ASSERT_TRUE(module.store(kRank0, PMIX_GLOBAL, "late", make_value_u16(5)).ok());
}

std::set<std::string> keys_received_through_modex(pmix_scope_t audience) {
    const auto sender = create_module();
    put_one_value_per_scope(*sender);
    const auto blob = sender->assemble_modex(kRank0, audience);
    EXPECT_TRUE(blob.ok()) << blob.status().message();
    if (!blob.ok()) return {};

    const auto receiver = create_module();
    EXPECT_TRUE(receiver->store_modex(kRank0, blob.value()).ok());
    std::set<std::string> keys;
    (void)receiver->fetch_all(
        kRank0, [&](std::string_view key, const pmix_value_t &) { keys.emplace(key); });
    return keys;
}

TEST(GdsModule, ModexForOtherNodesCarriesCommittedRemoteAndGlobalValuesOnly) {
    EXPECT_EQ(keys_received_through_modex(PMIX_REMOTE),
              (std::set<std::string>{"global", "remote"}));
}

TEST(GdsModule, ModexForLocalPeersCarriesCommittedLocalAndGlobalValuesOnly) {
    EXPECT_EQ(keys_received_through_modex(PMIX_LOCAL), (std::set<std::string>{"global", "local"}));
}

TEST(GdsModule, ModexOfAProcessWithNothingCommittedIsAValidEmptyBlob) {
    const auto sender = create_module();
    const auto blob = sender->assemble_modex(kRank0, PMIX_REMOTE);
    ASSERT_TRUE(blob.ok());
    const auto receiver = create_module();
    EXPECT_TRUE(receiver->store_modex(kRank0, blob.value()).ok());
}

TEST(GdsModule, ModexAudienceMustBeLocalOrRemote) {
    const auto module = create_module();
    for (const pmix_scope_t audience : {PMIX_GLOBAL, PMIX_INTERNAL, PMIX_SCOPE_UNDEF}) {
        const auto blob = module->assemble_modex(kRank0, audience);
        EXPECT_EQ(blob.status().code(), PMIX_ERR_BAD_PARAM) << int(audience);
    }
}

TEST(GdsModule, StoreModexRefusesAForeignBlobAndStoresNothing) {
    const auto module = create_module();
    const std::string foreign = "other-gds/7\nkey 3 0 1\n";
    const auto *bytes = reinterpret_cast<const std::byte *>(foreign.data());
    const Status status = module->store_modex(kRank0, std::span(bytes, foreign.size()));
    EXPECT_EQ(status.code(), PMIX_ERR_UNPACK_FAILURE);
    EXPECT_EQ(fetch(*module, kRank0, "key").status.code(), PMIX_ERR_NOT_FOUND);
}

TEST(GdsModule, RegisteredJobInfoReachesAClientAsOneBlob) {
    const auto server = create_module();
    const pmix_info_t job_info[] = {pmixpp::test::make_info_u32(PMIX_JOB_SIZE, 4)};
    ASSERT_TRUE(server->register_job("job1", job_info).ok());
    const auto blob = server->assemble_job("job1");
    ASSERT_TRUE(blob.ok()) << blob.status().message();

    const auto client = create_module();
    ASSERT_TRUE(client->store_job("job1", blob.value()).ok());
    const Fetched size = fetch(*client, make_proc("job1", PMIX_RANK_WILDCARD), PMIX_JOB_SIZE);
    ASSERT_TRUE(size.status.ok());
    EXPECT_EQ(size.type, PMIX_UINT32);
    EXPECT_EQ(size.number, 4u);

    EXPECT_EQ(server->assemble_job("job2").status().code(), PMIX_ERR_NOT_FOUND);
}

TEST(GdsModule, FetchAllVisitsEveryKeyInternalOnesIncluded) {
    const auto module = create_module();
    put_one_value_per_scope(*module);
    std::set<std::string> keys;
    ASSERT_TRUE(module
                    ->fetch_all(kRank0, [&](std::string_view key,
                                            const pmix_value_t &) { keys.emplace(key); })
                    .ok());
    EXPECT_EQ(keys, (std::set<std::string>{"global", "internal", "late", "local", "remote"}));
}

TEST(GdsModule, DeleteJobForgetsAllItsProcessesAndIgnoresUnknownJobs) {
    const auto module = create_module();
    ASSERT_TRUE(module->store(kRank0, PMIX_GLOBAL, "port", pmixpp::test::make_value_u16(1)).ok());
    ASSERT_TRUE(module->delete_job("job1").ok());
    EXPECT_EQ(fetch(*module, kRank0, "port").status.code(), PMIX_ERR_NOT_FOUND);
    EXPECT_TRUE(module->delete_job("never-registered").ok());
}

// The readers are const, so the core can serve PMIx_Get from a
// `const gds::Module&` under its reader lock, from many threads at once.
template <class M>
concept ReadableThroughConst = requires(const M &m, const pmix_proc_t &p, const gds::ValueSink &v,
                                        const KeyValueSink &kv) {
    m.fetch(p, "key", std::span<const pmix_info_t>{}, v);
    m.fetch_all(p, kv);
    m.assemble_modex(p, PMIX_REMOTE);
    m.assemble_job("job1");
};
static_assert(ReadableThroughConst<gds::Module>);

TEST(GdsModule, ReadersRunConcurrentlyOnAConstModule) {
    const auto module = create_module();
    ASSERT_TRUE(module->store(kRank0, PMIX_GLOBAL, "port", pmixpp::test::make_value_u16(7)).ok());
    const gds::Module &reader = *module;
    std::atomic<int> found{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 1000; ++i) {
                if (fetch(reader, kRank0, "port").number == 7) ++found;
            }
        });
    }
    for (auto &thread : threads) thread.join();
    EXPECT_EQ(found.load(), 4000);
}

}  // namespace
