// ptl_usock: PMIx connections over AF_UNIX stream sockets, with the peer's
// credentials from the kernel (SO_PEERCRED). URIs: "usock://<absolute path>"
// or "usock://@<name>" (Linux abstract namespace).
#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pmixpp/mca/ptl.hpp"

namespace pmixpp::ptl_usock {

inline constexpr std::string_view kScheme = "usock";

// The component's parameters, read once when the module is created.
struct UsockConfig {
    int priority = 0;
    // ptl_usock_tmpdir: where listeners put their socket when the server info
    // has no PMIX_SERVER_TMPDIR; empty: $TMPDIR, else /tmp.
    std::string tmpdir;
    // ptl_usock_abstract: listen on a name in Linux's abstract socket
    // namespace instead of a socket file in the tmpdir.
    bool abstract = false;
};

// Immutable after construction, so connect() (init thread) and listen()
// (progress thread) may overlap.
class UsockModule final : public mca::ptl::Module {
  public:
    explicit UsockModule(UsockConfig config) : config_(std::move(config)) {}

    std::vector<std::string> uri_schemes() const override { return {std::string(kScheme)}; }
    int priority() const override { return config_.priority; }

    // One listener: on the abstract name @pmixpp.<pid>.<n> when `abstract`,
    // else on <tmpdir>/pmixpp.<pid>.<n>, tmpdir being PMIX_SERVER_TMPDIR, else
    // ptl_usock_tmpdir, else $TMPDIR, else /tmp (the directory must exist).
    // Always listens: local clients are what this transport is for.
    mca::Result<std::vector<std::unique_ptr<mca::ptl::Listener>>> listen(
        const mca::ptl::ListenRequest &request) override;

    mca::Result<std::unique_ptr<mca::ptl::Connection>> connect(
        std::string_view uri, std::chrono::milliseconds timeout) override;

  private:
    UsockConfig config_;
};

}  // namespace pmixpp::ptl_usock
