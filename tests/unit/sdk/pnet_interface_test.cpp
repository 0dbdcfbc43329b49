// pnet: the launch flow setup_application -> setup_local_support -> setup_fork
// -> deregister_job, and inventory out and in, all through borrowed sinks.
#include "pmixpp/mca/pnet.hpp"

#include "pmix_values.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace pnet = pmixpp::mca::pnet;
using pmixpp::mca::Environment;
using pmixpp::mca::KeyValueSink;
using pmixpp::mca::Status;
using pmixpp::test::make_info_string;
using pmixpp::test::make_proc;

constexpr const char *kFabricKeyInfo = "test.pnet.fabric_key";
constexpr const char *kInterfaceInfo = "test.pnet.interface";

// Hands every job a fabric key at launch and exports it to the job's children.
class FabricKeys final : public pnet::Module {
  public:
    Status setup_application(std::string_view nspace, std::span<const pmix_info_t> job_info,
                             const KeyValueSink &launch_info) override {
        (void)job_info;
        const std::string key = "key-for-" + std::string(nspace);
        launch_info(kFabricKeyInfo, pmixpp::test::make_value_string(key.c_str()));  // borrowed
        return Status::success();
    }
    Status setup_local_support(std::string_view nspace,
                               std::span<const pmix_info_t> launch_info) override {
        for (const pmix_info_t &info : launch_info) {
            if (std::string_view(info.key) == kFabricKeyInfo)
                keys_[std::string(nspace)] = info.value.data.string;
        }
        return Status::success();
    }
    Status setup_fork(const pmix_proc_t &child, Environment &env) override {
        const auto key = keys_.find(child.nspace);
        if (key != keys_.end()) env["TEST_FABRIC_KEY"] = key->second;
        return Status::success();
    }
    void deregister_job(std::string_view nspace) override { keys_.erase(std::string(nspace)); }

    Status collect_inventory(std::span<const pmix_info_t>, const KeyValueSink &inventory) override {
        inventory(kInterfaceInfo, pmixpp::test::make_value_string("lo"));
        return Status::success();
    }
    Status deliver_inventory(std::span<const pmix_info_t> inventory,
                             std::span<const pmix_info_t>) override {
        for (const pmix_info_t &info : inventory) {
            if (std::string_view(info.key) == kInterfaceInfo)
                remote_interfaces.emplace_back(info.value.data.string);
        }
        return Status::success();
    }
    std::vector<std::string> remote_interfaces;

  private:
    std::map<std::string, std::string, std::less<>> keys_;
};

// What a KeyValueSink receiver does: copy keys and string values.
struct CollectedStrings {
    std::vector<std::string> keys, values;
    KeyValueSink sink() {
        return [this](std::string_view key, const pmix_value_t &value) {
            keys.emplace_back(key);
            values.emplace_back(value.type == PMIX_STRING ? value.data.string : "");
        };
    }
};

TEST(PnetModule, LaunchInfoFromSetupApplicationBecomesTheChildrensEnvironment) {
    const std::unique_ptr<pnet::Module> module = std::make_unique<FabricKeys>();
    CollectedStrings launch;
    ASSERT_TRUE(module->setup_application("job1", {}, launch.sink()).ok());
    ASSERT_EQ(launch.keys, std::vector<std::string>{kFabricKeyInfo});

    // The host carries the launch info to the node; modules ignore keys not theirs.
    const pmix_info_t delivered[] = {make_info_string("other.module.key", "whatever"),
                                     make_info_string(kFabricKeyInfo, launch.values[0].c_str())};
    ASSERT_TRUE(module->setup_local_support("job1", delivered).ok());

    Environment env{{"HOME", "/home/u"}};
    ASSERT_TRUE(module->setup_fork(make_proc("job1", 2), env).ok());
    EXPECT_EQ(env, (Environment{{"HOME", "/home/u"}, {"TEST_FABRIC_KEY", "key-for-job1"}}));
}

TEST(PnetModule, ChildrenOfUnknownOrDeregisteredJobsGetNothing) {
    const std::unique_ptr<pnet::Module> module = std::make_unique<FabricKeys>();
    const pmix_info_t delivered[] = {make_info_string(kFabricKeyInfo, "k")};
    ASSERT_TRUE(module->setup_local_support("job1", delivered).ok());
    module->deregister_job("job1");
    module->deregister_job("never-seen");

    Environment env;
    ASSERT_TRUE(module->setup_fork(make_proc("job1", 0), env).ok());
    ASSERT_TRUE(module->setup_fork(make_proc("job2", 0), env).ok());
    EXPECT_TRUE(env.empty());
}

TEST(PnetModule, InventoryCollectedOnOneNodeIsDeliveredToAnother) {
    const std::unique_ptr<pnet::Module> here = std::make_unique<FabricKeys>();
    const std::unique_ptr<pnet::Module> there = std::make_unique<FabricKeys>();
    CollectedStrings inventory;
    ASSERT_TRUE(here->collect_inventory({}, inventory.sink()).ok());
    ASSERT_EQ(inventory.values, std::vector<std::string>{"lo"});

    const pmix_info_t delivered[] = {make_info_string(kInterfaceInfo, inventory.values[0].c_str())};
    ASSERT_TRUE(there->deliver_inventory(delivered, {}).ok());
    EXPECT_EQ(static_cast<FabricKeys &>(*there).remote_interfaces, std::vector<std::string>{"lo"});
}

}  // namespace
