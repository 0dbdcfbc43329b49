// The shared SDK vocabulary (include/pmixpp/mca/sdk_types.hpp) and the
// identity every framework header declares for the component loader.
#include "pmixpp/mca/evcache.hpp"
#include "pmixpp/mca/gds.hpp"
#include "pmixpp/mca/plog.hpp"
#include "pmixpp/mca/pnet.hpp"
#include "pmixpp/mca/psensor.hpp"
#include "pmixpp/mca/ptl.hpp"
#include "pmixpp/mca/sdk_types.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <type_traits>
#include <string_view>
#include <variant>
#include <vector>

namespace {

namespace mca = pmixpp::mca;
using pmixpp::mca::kStatusDeclined;
using pmixpp::mca::Result;
using pmixpp::mca::Status;

TEST(SdkStatus, DefaultConstructedStatusIsSuccessWithoutMessage) {
    const Status status;
    EXPECT_TRUE(status.ok());
    EXPECT_EQ(status.code(), PMIX_SUCCESS);
    EXPECT_TRUE(status.message().empty());
    EXPECT_TRUE(Status::success().ok());
}

TEST(SdkStatus, ErrorStatusCarriesCodeAndMessage) {
    const Status status(PMIX_ERR_UNREACH, "ptl_usock: nobody listens on /tmp/s");
    EXPECT_FALSE(status.ok());
    EXPECT_EQ(status.code(), PMIX_ERR_UNREACH);
    EXPECT_EQ(status.message(), "ptl_usock: nobody listens on /tmp/s");
}

TEST(SdkResult, ResultWithValueIsOkAndReportsSuccess) {
    Result<std::vector<int>> result(std::vector<int>{1, 2, 3});
    ASSERT_TRUE(result.ok());
    EXPECT_TRUE(static_cast<bool>(result));
    EXPECT_EQ(result.value().size(), 3u);
    EXPECT_TRUE(result.status().ok());
    const std::vector<int> moved = std::move(result).value();
    EXPECT_EQ(moved, (std::vector<int>{1, 2, 3}));
}

TEST(SdkResult, ResultWithErrorIsNotOkAndKeepsTheStatus) {
    const Result<std::string> result(Status(PMIX_ERR_NOT_FOUND, "no such key"));
    EXPECT_FALSE(result.ok());
    EXPECT_FALSE(static_cast<bool>(result));
    EXPECT_EQ(result.status().code(), PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(result.status().message(), "no such key");
    EXPECT_THROW((void)result.value(), std::bad_variant_access);
}

TEST(SdkResult, ResultOfABasePointerIsBuiltFromADerivedPointer) {
    struct Base {
        virtual ~Base() = default;
        virtual int id() const { return 1; }
    };
    struct Derived : Base {
        int id() const override { return 2; }
    };
    const auto make = []() -> Result<std::unique_ptr<Base>> { return std::make_unique<Derived>(); };
    const auto result = make();
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(result.value()->id(), 2);
}

TEST(SdkResult, ResultBuiltFromSuccessStatusBecomesAnInternalError) {
    const Result<int> result(Status::success());
    EXPECT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), PMIX_ERROR);
    EXPECT_FALSE(result.status().message().empty());
}

TEST(SdkDeclined, DeclinedIsAnErrorThatNoPublicConstantUses) {
    EXPECT_LT(kStatusDeclined, PMIX_SUCCESS);
    EXPECT_GT(kStatusDeclined, PMIX_EXTERNAL_ERR_BASE);  // inside PMIx's own range
    for (const pmix_status_t code :
         {PMIX_ERROR, PMIX_ERR_NOT_SUPPORTED, PMIX_ERR_NOT_FOUND, PMIX_ERR_BAD_PARAM,
          PMIX_ERR_UNREACH, PMIX_ERR_TIMEOUT, PMIX_ERR_WOULD_BLOCK, PMIX_ERR_OUT_OF_RESOURCE}) {
        EXPECT_NE(kStatusDeclined, code);
    }
}

// The component loader matches a descriptor against exactly these three names.
TEST(SdkFrameworkIdentity, EachHeaderNamesItsFrameworkAndInterfaceVersion) {
    EXPECT_EQ(std::string_view(mca::ptl::kFrameworkName), "ptl");
    EXPECT_EQ(std::string_view(mca::gds::kFrameworkName), "gds");
    EXPECT_EQ(std::string_view(mca::psensor::kFrameworkName), "psensor");
    EXPECT_EQ(std::string_view(mca::plog::kFrameworkName), "plog");
    EXPECT_EQ(std::string_view(mca::pnet::kFrameworkName), "pnet");
    EXPECT_EQ(std::string_view(mca::evcache::kFrameworkName), "evcache");

    // ptl 2.0: listen() takes a ListenRequest.
    EXPECT_EQ(mca::ptl::kInterfaceMajor, 2u);
    EXPECT_EQ(mca::ptl::kInterfaceMinor, 0u);
    // plog 2.0: a completion carries a reason with each status (EntryResult).
    EXPECT_EQ(mca::plog::kInterfaceMajor, 2u);
    EXPECT_EQ(mca::plog::kInterfaceMinor, 0u);
    const unsigned versions[][2] = {
        {mca::gds::kInterfaceMajor, mca::gds::kInterfaceMinor},
        {mca::psensor::kInterfaceMajor, mca::psensor::kInterfaceMinor},
        {mca::pnet::kInterfaceMajor, mca::pnet::kInterfaceMinor},
        {mca::evcache::kInterfaceMajor, mca::evcache::kInterfaceMinor},
    };
    for (const auto &version : versions) EXPECT_EQ(version[0], 1u);
    // gds 1.1 added assemble_modex_pending (what a commit sends), 1.2
    // assemble_modex_scope (a commit's GLOBAL values sent once); the rest are 1.0.
    EXPECT_EQ(mca::gds::kInterfaceMinor, 2u);
    for (std::size_t i = 1; i < std::size(versions); ++i) EXPECT_LE(versions[i][1], 1u);
}

// Modules are created by a component and destroyed by the core through the
// interface: every one is abstract and polymorphically destructible.
template <class T>
constexpr bool kIsInterface = std::is_abstract_v<T> &&std::has_virtual_destructor_v<T>;
static_assert(kIsInterface<mca::ptl::Module>);
static_assert(kIsInterface<mca::ptl::Listener>);
static_assert(kIsInterface<mca::ptl::Connection>);
static_assert(kIsInterface<mca::gds::Module>);
static_assert(kIsInterface<mca::psensor::Module>);
static_assert(kIsInterface<mca::plog::Module>);
static_assert(kIsInterface<mca::pnet::Module>);
static_assert(kIsInterface<mca::evcache::Module>);
static_assert(kIsInterface<mca::ProgressTimers>);

}  // namespace
