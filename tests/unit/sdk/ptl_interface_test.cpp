// ptl: a module hands the core sockets and peer credentials; the core polls,
// reads and writes them. FakeTransport connects in-process over socketpairs.
#include "pmixpp/mca/ptl.hpp"

#include "pmix_values.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>

namespace {

namespace ptl = pmixpp::mca::ptl;
using pmixpp::mca::Environment;
using pmixpp::mca::Result;
using pmixpp::mca::Status;

class SocketConnection final : public ptl::Connection {
  public:
    SocketConnection(int fd, std::string peer) : fd_(fd), peer_(std::move(peer)) {}
    ~SocketConnection() override { ::close(fd_); }

    int fd() const override { return fd_; }
    std::optional<ptl::PeerCredentials> peer_credentials() const override {
        ucred cred{};
        socklen_t len = sizeof(cred);
        if (::getsockopt(fd_, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return std::nullopt;
        return ptl::PeerCredentials{cred.uid, cred.gid, cred.pid};
    }
    std::string describe_peer() const override { return peer_; }

  private:
    int fd_;
    std::string peer_;
};

// Connections waiting to be accepted, per listening URI. The listener's fd is
// the read end of a pipe that connect() writes one byte to per connection.
struct Rendezvous {
    struct Endpoint {
        int wake_read = -1;
        int wake_write = -1;
        std::deque<int> pending;
    };
    std::map<std::string, Endpoint, std::less<>> endpoints;
};

class FakeListener final : public ptl::Listener {
  public:
    FakeListener(std::shared_ptr<Rendezvous> rendezvous, std::string uri)
        : rendezvous_(std::move(rendezvous)), uri_(std::move(uri)) {
        int fds[2];
        if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
        rendezvous_->endpoints[uri_] = {fds[0], fds[1], {}};
    }
    ~FakeListener() override {
        auto &endpoint = rendezvous_->endpoints.at(uri_);
        for (const int fd : endpoint.pending) ::close(fd);
        ::close(endpoint.wake_read);
        ::close(endpoint.wake_write);
        rendezvous_->endpoints.erase(uri_);
    }

    int fd() const override { return rendezvous_->endpoints.at(uri_).wake_read; }
    std::string uri() const override { return uri_; }
    Result<std::unique_ptr<ptl::Connection>> accept() override {
        auto &endpoint = rendezvous_->endpoints.at(uri_);
        char byte;
        if (endpoint.pending.empty() || ::read(endpoint.wake_read, &byte, 1) != 1) {
            return Status(PMIX_ERR_WOULD_BLOCK, "");
        }
        const int fd = endpoint.pending.front();
        endpoint.pending.pop_front();
        return std::make_unique<SocketConnection>(fd, "fake://client");
    }

  private:
    std::shared_ptr<Rendezvous> rendezvous_;
    std::string uri_;
};

class FakeTransport final : public ptl::Module {
  public:
    std::vector<std::string> uri_schemes() const override { return {"fake"}; }
    int priority() const override { return 42; }

    Result<std::vector<std::unique_ptr<ptl::Listener>>> listen(
        const ptl::ListenRequest &request) override {
        (void)request;
        std::vector<std::unique_ptr<ptl::Listener>> listeners;
        listeners.push_back(std::make_unique<FakeListener>(rendezvous_, "fake://server-1"));
        return listeners;
    }

    Result<std::unique_ptr<ptl::Connection>> connect(std::string_view uri,
                                                     std::chrono::milliseconds timeout) override {
        (void)timeout;
        const auto endpoint = rendezvous_->endpoints.find(uri);
        if (endpoint == rendezvous_->endpoints.end()) {
            return Status(PMIX_ERR_UNREACH, "fake: nobody listens on " + std::string(uri));
        }
        int fds[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0) {
            return Status(PMIX_ERROR, std::string("fake: socketpair: ") + std::strerror(errno));
        }
        endpoint->second.pending.push_back(fds[1]);
        const char wake = 1;
        if (::write(endpoint->second.wake_write, &wake, 1) != 1) {
            return Status(PMIX_ERROR, "fake: cannot wake the listener");
        }
        return std::make_unique<SocketConnection>(fds[0], std::string(uri));
    }

  private:
    std::shared_ptr<Rendezvous> rendezvous_ = std::make_shared<Rendezvous>();
};

std::unique_ptr<ptl::Module> create_module() {
    return std::make_unique<FakeTransport>();
}

TEST(PtlUri, SchemeIsTheTextBeforeColonSlashSlash) {
    static_assert(ptl::uri_scheme("usock:///tmp/pmix/s") == "usock");
    EXPECT_EQ(ptl::uri_scheme("tcp4://10.0.0.1:4711"), "tcp4");
    EXPECT_EQ(ptl::uri_scheme("tcp6://[::1]:4711"), "tcp6");
    EXPECT_EQ(ptl::uri_scheme("/tmp/pmix/s"), "");
    EXPECT_EQ(ptl::uri_scheme("usock:/tmp/s"), "");
    EXPECT_EQ(ptl::uri_scheme(""), "");
}

TEST(PtlModule, DefaultHandlesUriAcceptsExactlyItsOwnSchemes) {
    const auto module = create_module();
    EXPECT_TRUE(module->handles_uri("fake://server-1"));
    EXPECT_FALSE(module->handles_uri("tcp4://10.0.0.1:4711"));
    EXPECT_FALSE(module->handles_uri("fakeish://server-1"));
    EXPECT_FALSE(module->handles_uri("fake"));
    EXPECT_FALSE(module->handles_uri(""));
}

TEST(PtlModule, DefaultFindServersFindsNoneAndDefaultSetupForkAddsNothing) {
    const auto module = create_module();
    const auto found = module->find_servers({});
    ASSERT_TRUE(found.ok());
    EXPECT_TRUE(found.value().empty());

    Environment env{{"PATH", "/usr/bin"}};
    const Status status = module->setup_fork(pmixpp::test::make_proc("job1", 0), env);
    EXPECT_TRUE(status.ok());
    EXPECT_EQ(env, (Environment{{"PATH", "/usr/bin"}}));
}

TEST(PtlModule, ListenerUriIsOneTheModuleHandlesAndConnectsTo) {
    const auto module = create_module();
    auto listeners = module->listen({});
    ASSERT_TRUE(listeners.ok()) << listeners.status().message();
    ASSERT_EQ(listeners.value().size(), 1u);
    const auto &listener = listeners.value().front();
    EXPECT_TRUE(module->handles_uri(listener->uri()));

    auto client = module->connect(listener->uri(), std::chrono::seconds(1));
    ASSERT_TRUE(client.ok()) << client.status().message();
    auto server = listener->accept();
    ASSERT_TRUE(server.ok()) << server.status().message();

    // The core does the I/O on the descriptors itself.
    ASSERT_EQ(::write(client.value()->fd(), "hello", 5), 5);
    char buffer[8] = {};
    ASSERT_EQ(::read(server.value()->fd(), buffer, sizeof(buffer)), 5);
    EXPECT_STREQ(buffer, "hello");
    EXPECT_NE(::fcntl(server.value()->fd(), F_GETFL) & O_NONBLOCK, 0);
    EXPECT_NE(::fcntl(server.value()->fd(), F_GETFD) & FD_CLOEXEC, 0);
}

TEST(PtlModule, LocalPeerCredentialsAreTheConnectingProcess) {
    const auto module = create_module();
    auto listeners = module->listen({});
    ASSERT_TRUE(listeners.ok());
    auto client = module->connect(listeners.value().front()->uri(), std::chrono::seconds(1));
    ASSERT_TRUE(client.ok());
    auto server = listeners.value().front()->accept();
    ASSERT_TRUE(server.ok());

    const auto cred = server.value()->peer_credentials();
    ASSERT_TRUE(cred.has_value());
    EXPECT_EQ(cred->uid, ::getuid());
    EXPECT_EQ(cred->gid, ::getgid());
    EXPECT_EQ(cred->pid, ::getpid());
}

TEST(PtlModule, AcceptWithNothingPendingIsWouldBlock) {
    const auto module = create_module();
    auto listeners = module->listen({});
    ASSERT_TRUE(listeners.ok());
    const auto accepted = listeners.value().front()->accept();
    EXPECT_FALSE(accepted.ok());
    EXPECT_EQ(accepted.status().code(), PMIX_ERR_WOULD_BLOCK);
}

TEST(PtlModule, ConnectToAnUnknownUriIsUnreachableAndNamesTheUri) {
    const auto module = create_module();
    const auto connection = module->connect("fake://nobody", std::chrono::milliseconds(10));
    ASSERT_FALSE(connection.ok());
    EXPECT_EQ(connection.status().code(), PMIX_ERR_UNREACH);
    EXPECT_NE(connection.status().message().find("fake://nobody"), std::string::npos);
}

TEST(PtlModule, DestroyingAConnectionClosesItsSocket) {
    const auto module = create_module();
    auto listeners = module->listen({});
    ASSERT_TRUE(listeners.ok());
    auto client = module->connect(listeners.value().front()->uri(), std::chrono::seconds(1));
    ASSERT_TRUE(client.ok());
    const int fd = client.value()->fd();
    client.value().reset();
    errno = 0;
    EXPECT_EQ(::fcntl(fd, F_GETFD), -1);
    EXPECT_EQ(errno, EBADF);
}

}  // namespace
