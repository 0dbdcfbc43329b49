// What the transport tests share: the real ptl components loaded through a
// ComponentRepository of their own (parameters from a map, never from the
// process environment), server info builders, and small socket helpers.
#pragma once

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pmixpp/mca/ptl.hpp"
#include "pmixpp/mca/repository.hpp"

namespace ptltest {

namespace mca = pmixpp::mca;
namespace ptl = pmixpp::mca::ptl;
using namespace std::chrono_literals;

using Env = std::map<std::string, std::string, std::less<>>;

// The ptl components of this build (DSOs in build/lib/pmix, or compiled into
// libpmix), with `env` as their parameters' environment ("ptl_tcp_port" = ...).
class PtlRepository {
  public:
    PtlRepository() : PtlRepository(Env{}) {}
    // Brace lists of pairs: PtlRepository({{"ptl", "tcp"}}).
    explicit PtlRepository(std::initializer_list<Env::value_type> env) : PtlRepository(Env(env)) {}
    PtlRepository(const PtlRepository &) = delete;
    PtlRepository &operator=(const PtlRepository &) = delete;

    explicit PtlRepository(Env env)
        : params_([&] {
              mca::ParamSourceConfig config;
              config.environment = std::move(env);
              return config;
          }()),
          repo_(params_, [] {
              mca::RepositoryOptions options;
              options.search_path = {PTL_COMPONENT_DIR};
              return options;
          }()) {
        // Tests look at the failures themselves; keep expected ones off stderr.
        params_.set_log_problems(false);
        repo_.set_log_problems(false);
    }

    mca::FrameworkSelection select() { return repo_.select_components("ptl"); }

    // A module of component `name` ("usock", "tcp"); fails the test if that
    // component was not selected.
    mca::ModuleHandle module(std::string_view name) {
        const mca::FrameworkSelection selection = select();
        for (const auto &selected : selection.selected) {
            if (selected.record.component != name) continue;
            auto handle = repo_.create_module(selected);
            if (!handle.ok()) {
                ADD_FAILURE() << handle.error().message;
                return {};
            }
            return std::move(handle).value();
        }
        std::string why;
        for (const auto &d : selection.decisions) why += d.component + ": " + d.reason + "; ";
        for (const auto &f : repo_.failures("ptl")) why += f.message + "; ";
        ADD_FAILURE() << "ptl_" << name << " was not selected: " << why;
        return {};
    }

    mca::ComponentRepository &repository() { return repo_; }
    mca::ParameterRegistry &parameters() { return params_; }

  private:
    mca::ParameterRegistry params_;
    mca::ComponentRepository repo_;
};

// A server info array; string values are copied and owned here.
class ServerInfo {
  public:
    ServerInfo &string(std::string_view key, std::string value) {
        strings_.push_back(std::make_unique<std::string>(std::move(value)));
        pmix_info_t &info = add(key);
        info.value.type = PMIX_STRING;
        info.value.data.string = strings_.back()->data();
        return *this;
    }
    ServerInfo &flag(std::string_view key, bool value = true) {
        pmix_info_t &info = add(key);
        info.value.type = PMIX_BOOL;
        info.value.data.flag = value;
        return *this;
    }
    ServerInfo &integer(std::string_view key, int value) {
        pmix_info_t &info = add(key);
        info.value.type = PMIX_INT;
        info.value.data.integer = value;
        return *this;
    }
    std::span<const pmix_info_t> span() const { return infos_; }

  private:
    pmix_info_t &add(std::string_view key) {
        pmix_info_t info{};
        std::memcpy(info.key, key.data(), std::min(key.size(), sizeof(info.key) - 1));
        infos_.push_back(info);
        return infos_.back();
    }
    std::vector<pmix_info_t> infos_;
    std::vector<std::unique_ptr<std::string>> strings_;
};

// A fresh directory under the system tmpdir, removed with everything in it.
class TempDir {
  public:
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "ptltest.XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        path_ = pattern;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    const std::string &path() const { return path_; }

  private:
    std::string path_;
};

inline bool wait_readable(int fd, std::chrono::milliseconds timeout = 5s) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(timeout.count())) == 1;
}

inline bool is_nonblocking_and_cloexec(int fd) {
    return (::fcntl(fd, F_GETFL) & O_NONBLOCK) != 0 && (::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0;
}

// Waits for a pending connection and accepts it.
inline std::unique_ptr<ptl::Connection> accept_one(ptl::Listener &listener) {
    if (!wait_readable(listener.fd())) {
        ADD_FAILURE() << "nothing to accept on " << listener.uri();
        return nullptr;
    }
    auto accepted = listener.accept();
    if (!accepted.ok()) {
        ADD_FAILURE() << "accept on " << listener.uri() << ": " << accepted.status().message();
        return nullptr;
    }
    return std::move(accepted).value();
}

// Writes `text` on one end and checks that the other end reads exactly it.
inline void expect_bytes_flow(const ptl::Connection &from, const ptl::Connection &to,
                              std::string_view text) {
    ASSERT_EQ(::write(from.fd(), text.data(), text.size()), static_cast<ssize_t>(text.size()));
    ASSERT_TRUE(wait_readable(to.fd()));
    std::string buffer(text.size() + 16, '\0');
    const ssize_t n = ::read(to.fd(), buffer.data(), buffer.size());
    ASSERT_EQ(n, static_cast<ssize_t>(text.size()));
    buffer.resize(static_cast<std::size_t>(n));
    EXPECT_EQ(buffer, text);
}

}  // namespace ptltest
