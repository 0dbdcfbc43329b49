// ptl_tcp over real loopback sockets (127.0.0.1 and ::1 only): when it
// listens, where, connect/accept in both directions, TCP_NODELAY, errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <sys/wait.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <optional>

#include "ptl/ptl_base.hpp"
#include "ptl_test_support.hpp"

namespace {

using namespace ptltest;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

bool has_ipv6_loopback() {
    const int fd = ::socket(AF_INET6, SOCK_STREAM, 0);
    if (fd < 0) return false;
    sockaddr_in6 address{};
    address.sin6_family = AF_INET6;
    address.sin6_addr = in6addr_loopback;
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address)) == 0;
    ::close(fd);
    return ok;
}

bool nodelay(int fd) {
    int value = 0;
    socklen_t length = sizeof(value);
    return ::getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &value, &length) == 0 && value != 0;
}

// A raw IPv4 loopback listening socket with its port; backlog as given.
struct RawListener {
    explicit RawListener(int backlog) {
        fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof(address);
        if (::bind(fd, reinterpret_cast<sockaddr *>(&address), length) != 0 ||
            ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length) != 0 ||
            (backlog >= 0 && ::listen(fd, backlog) != 0)) {
            throw std::runtime_error("raw listener");
        }
        port = ntohs(address.sin_port);
    }
    ~RawListener() {
        if (fd >= 0) ::close(fd);
    }
    std::string uri() const { return "tcp4://127.0.0.1:" + std::to_string(port); }
    int fd = -1;
    unsigned port = 0;
};

// A loopback port that nobody listens on (bound, then released).
unsigned closed_port() {
    RawListener bound(-1);
    return bound.port;
}

struct TcpFixture : ::testing::Test {
    // Listeners of a server that asked for tool support.
    std::vector<std::unique_ptr<ptl::Listener>> listen_for_tools(ServerInfo info = {}) {
        info.flag(PMIX_SERVER_TOOL_SUPPORT);
        info.string(PMIX_SERVER_TMPDIR, dir.path());
        auto listeners = module->listen({info.span()});
        if (!listeners.ok()) {
            ADD_FAILURE() << listeners.status().message();
            return {};
        }
        return std::move(listeners).value();
    }
    std::unique_ptr<ptl::Listener> listener_of(std::string_view scheme) {
        for (auto &listener : listen_for_tools()) {
            if (ptl::uri_scheme(listener->uri()) == scheme) return std::move(listener);
        }
        ADD_FAILURE() << "no " << scheme << " listener";
        return nullptr;
    }

    TempDir dir;
    PtlRepository repository;
    mca::ModuleHandle handle = repository.module("tcp");
    ptl::Module *module = handle.as<ptl::Module>();
};

TEST_F(TcpFixture, ListensOnlyWhenTheServerAsksForToolSystemOrRemoteSupport) {
    ASSERT_NE(module, nullptr);
    auto plain = module->listen({});
    ASSERT_TRUE(plain.ok()) << plain.status().message();
    EXPECT_TRUE(plain.value().empty());

    for (const char *key :
         {PMIX_SERVER_TOOL_SUPPORT, PMIX_SERVER_SYSTEM_SUPPORT, PMIX_SERVER_REMOTE_CONNECTIONS}) {
        ServerInfo info;
        info.flag(key);
        info.string(PMIX_SERVER_TMPDIR, dir.path());
        auto listeners = module->listen({info.span()});
        ASSERT_TRUE(listeners.ok()) << key << ": " << listeners.status().message();
        EXPECT_FALSE(listeners.value().empty()) << key;
    }
    ServerInfo declined;
    declined.flag(PMIX_SERVER_TOOL_SUPPORT, false);
    auto none = module->listen({declined.span()});
    ASSERT_TRUE(none.ok());
    EXPECT_TRUE(none.value().empty());
}

TEST_F(TcpFixture, ListensOnLoopbackOnAnEphemeralPortByDefault) {
    ASSERT_NE(module, nullptr);
    auto listeners = listen_for_tools();
    ASSERT_FALSE(listeners.empty());
    std::vector<std::string> uris;
    for (const auto &listener : listeners) {
        uris.push_back(listener->uri());
        EXPECT_TRUE(module->handles_uri(listener->uri()));
        EXPECT_TRUE(is_nonblocking_and_cloexec(listener->fd()));
    }
    EXPECT_THAT(uris[0], MatchesRegex("tcp4://127\\.0\\.0\\.1:[1-9][0-9]*"));
    EXPECT_NE(uris[0], "tcp4://127.0.0.1:0");
    if (has_ipv6_loopback()) {
        ASSERT_EQ(uris.size(), 2u);
        EXPECT_THAT(uris[1], MatchesRegex("tcp6://\\[::1\\]:[1-9][0-9]*"));
    } else {
        EXPECT_EQ(uris.size(), 1u);
    }
}

TEST_F(TcpFixture, Ipv4ConnectAndAcceptCarryBytesBothWaysWithNodelay) {
    ASSERT_NE(module, nullptr);
    auto listener = listener_of("tcp4");
    ASSERT_NE(listener, nullptr);
    auto client = module->connect(listener->uri(), 2s);
    ASSERT_TRUE(client.ok()) << client.status().message();
    auto server = accept_one(*listener);
    ASSERT_NE(server, nullptr);

    for (const auto *connection : {client.value().get(), server.get()}) {
        EXPECT_TRUE(is_nonblocking_and_cloexec(connection->fd()));
        EXPECT_TRUE(nodelay(connection->fd()));
        EXPECT_FALSE(connection->peer_credentials().has_value());
    }
    expect_bytes_flow(*client.value(), *server, "hello server");
    expect_bytes_flow(*server, *client.value(), "hello client");
    EXPECT_EQ(client.value()->describe_peer(), listener->uri());
    EXPECT_THAT(server->describe_peer(), MatchesRegex("tcp4://127\\.0\\.0\\.1:[1-9][0-9]*"));
}

TEST_F(TcpFixture, Ipv6ConnectAndAcceptCarryBytesBothWaysWithNodelay) {
    ASSERT_NE(module, nullptr);
    if (!has_ipv6_loopback()) GTEST_SKIP() << "no IPv6 loopback on this host";
    auto listener = listener_of("tcp6");
    ASSERT_NE(listener, nullptr);
    auto client = module->connect(listener->uri(), 2s);
    ASSERT_TRUE(client.ok()) << client.status().message();
    auto server = accept_one(*listener);
    ASSERT_NE(server, nullptr);

    for (const auto *connection : {client.value().get(), server.get()}) {
        EXPECT_TRUE(is_nonblocking_and_cloexec(connection->fd()));
        EXPECT_TRUE(nodelay(connection->fd()));
    }
    expect_bytes_flow(*client.value(), *server, "hello server");
    expect_bytes_flow(*server, *client.value(), "hello client");
    EXPECT_THAT(server->describe_peer(), MatchesRegex("tcp6://\\[::1\\]:[1-9][0-9]*"));
}

TEST_F(TcpFixture, AcceptWithNothingPendingIsWouldBlock) {
    ASSERT_NE(module, nullptr);
    auto listener = listener_of("tcp4");
    ASSERT_NE(listener, nullptr);
    auto nothing = listener->accept();
    ASSERT_FALSE(nothing.ok());
    EXPECT_EQ(nothing.status().code(), PMIX_ERR_WOULD_BLOCK);
}

TEST_F(TcpFixture, ConnectToAClosedPortIsUnreachableAndNamesTheUri) {
    ASSERT_NE(module, nullptr);
    const std::string uri = "tcp4://127.0.0.1:" + std::to_string(closed_port());
    auto connection = module->connect(uri, 2s);
    ASSERT_FALSE(connection.ok());
    EXPECT_EQ(connection.status().code(), PMIX_ERR_UNREACH);
    EXPECT_THAT(connection.status().message(), HasSubstr(uri));
}

TEST_F(TcpFixture, MalformedUrisAreBadParamAndNameTheUri) {
    ASSERT_NE(module, nullptr);
    for (const char *uri :
         {"tcp4://127.0.0.1", "tcp4://127.0.0.1:", "tcp4://127.0.0.1:0", "tcp4://127.0.0.1:65536",
          "tcp4://127.0.0.1:80x", "tcp4://localhost:80", "tcp4://127.0.0:80", "tcp6://::1:80",
          "tcp6://[::1]", "tcp6://[::1]:", "tcp6://[127.0.0.1]:80", "tcp6://[::1%nosuchif0]:80",
          "usock:///tmp/s"}) {
        auto connection = module->connect(uri, 1s);
        ASSERT_FALSE(connection.ok()) << uri;
        EXPECT_EQ(connection.status().code(), PMIX_ERR_BAD_PARAM) << uri;
        EXPECT_THAT(connection.status().message(), HasSubstr(std::string("'") + uri + "'"));
    }
}

// A loopback listener that never accepts and whose accept queue is full: the
// kernel drops further SYNs, so a connect can only time out.
TEST_F(TcpFixture, ConnectGivesUpWithTimeoutWhenNobodyAnswers) {
    ASSERT_NE(module, nullptr);
    RawListener full(0);
    std::vector<int> fillers;
    // With backlog 0 the queue holds one connection; fill it and make sure
    // the next handshake does not complete.
    for (int i = 0; i < 2; ++i) {
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        address.sin_port = htons(static_cast<uint16_t>(full.port));
        ::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address));
        fillers.push_back(fd);
    }
    ::usleep(50 * 1000);

    auto connection = module->connect(full.uri(), 200ms);
    ASSERT_FALSE(connection.ok());
    EXPECT_EQ(connection.status().code(), PMIX_ERR_TIMEOUT);
    EXPECT_THAT(connection.status().message(), HasSubstr(full.uri()));
    for (const int fd : fillers) ::close(fd);
}

TEST_F(TcpFixture, ServerInfoPortsFixThePortOfEachFamily) {
    ASSERT_NE(module, nullptr);
    const unsigned port = closed_port();
    ServerInfo info;
    info.integer(PMIX_TCP_IPV4_PORT, static_cast<int>(port));
    info.flag(PMIX_TCP_DISABLE_IPV6);
    auto listeners = listen_for_tools(std::move(info));
    ASSERT_EQ(listeners.size(), 1u);
    EXPECT_EQ(listeners[0]->uri(), "tcp4://127.0.0.1:" + std::to_string(port));
}

TEST_F(TcpFixture, ServerInfoCanDisableEachFamily) {
    ASSERT_NE(module, nullptr);
    ServerInfo no_ipv4;
    no_ipv4.flag(PMIX_TCP_DISABLE_IPV4);
    for (const auto &listener : listen_for_tools(std::move(no_ipv4))) {
        EXPECT_THAT(listener->uri(), StartsWith("tcp6://"));
    }
    ServerInfo no_ipv6;
    no_ipv6.flag(PMIX_TCP_DISABLE_IPV6);
    auto listeners = listen_for_tools(std::move(no_ipv6));
    ASSERT_EQ(listeners.size(), 1u);
    EXPECT_THAT(listeners[0]->uri(), StartsWith("tcp4://"));
}

TEST_F(TcpFixture, ServerInfoIfIncludeChoosesTheAddresses) {
    ASSERT_NE(module, nullptr);
    ServerInfo v4_block;
    v4_block.string(PMIX_TCP_IF_INCLUDE, "127.0.0.0/8");
    auto listeners = listen_for_tools(std::move(v4_block));
    ASSERT_EQ(listeners.size(), 1u);
    EXPECT_THAT(listeners[0]->uri(), StartsWith("tcp4://127.0.0.1:"));

    if (has_ipv6_loopback()) {
        ServerInfo v6_address;
        v6_address.string(PMIX_TCP_IF_INCLUDE, "::1");
        auto v6 = listen_for_tools(std::move(v6_address));
        ASSERT_EQ(v6.size(), 1u);
        EXPECT_THAT(v6[0]->uri(), StartsWith("tcp6://[::1]:"));
    }
}

TEST_F(TcpFixture, IfIncludeMatchingNothingIsAnErrorListingTheAddresses) {
    ASSERT_NE(module, nullptr);
    ServerInfo info;
    info.flag(PMIX_SERVER_TOOL_SUPPORT);
    info.string(PMIX_TCP_IF_INCLUDE, "nosuchif0");
    auto listeners = module->listen({info.span()});
    ASSERT_FALSE(listeners.ok());
    EXPECT_EQ(listeners.status().code(), PMIX_ERR_BAD_PARAM);
    EXPECT_THAT(listeners.status().message(), HasSubstr("nosuchif0"));
    EXPECT_THAT(listeners.status().message(), HasSubstr("127.0.0.1"));

    ServerInfo bad_block;
    bad_block.flag(PMIX_SERVER_TOOL_SUPPORT);
    bad_block.string(PMIX_TCP_IF_INCLUDE, "127.0.0.0/33");
    auto refused = module->listen({bad_block.span()});
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), PMIX_ERR_BAD_PARAM);
    EXPECT_THAT(refused.status().message(), HasSubstr("127.0.0.0/33"));
}

TEST_F(TcpFixture, PortAlreadyTakenIsAnErrorNamingTheAddress) {
    ASSERT_NE(module, nullptr);
    RawListener taken(4);
    ServerInfo info;
    info.integer(PMIX_TCP_IPV4_PORT, static_cast<int>(taken.port));
    info.flag(PMIX_TCP_DISABLE_IPV6);
    info.flag(PMIX_SERVER_TOOL_SUPPORT);
    auto listeners = module->listen({info.span()});
    ASSERT_FALSE(listeners.ok());
    EXPECT_THAT(listeners.status().message(), HasSubstr(taken.uri()));
}

// --- parameters ------------------------------------------------------------------

TEST(TcpParameters, ListenAlwaysListensWithoutToolSupport) {
    PtlRepository repository({{"ptl_tcp_listen", "always"}});
    auto handle = repository.module("tcp");
    ASSERT_TRUE(handle);
    auto listeners = handle.as<ptl::Module>()->listen({});
    ASSERT_TRUE(listeners.ok()) << listeners.status().message();
    EXPECT_FALSE(listeners.value().empty());
}

TEST(TcpParameters, ListenNeverIgnoresToolSupport) {
    PtlRepository repository({{"ptl_tcp_listen", "never"}});
    auto handle = repository.module("tcp");
    ASSERT_TRUE(handle);
    ServerInfo info;
    info.flag(PMIX_SERVER_TOOL_SUPPORT);
    auto listeners = handle.as<ptl::Module>()->listen({info.span()});
    ASSERT_TRUE(listeners.ok());
    EXPECT_TRUE(listeners.value().empty());
}

TEST(TcpParameters, ServingLocalClientsMakesItListenWithoutToolSupport) {
    PtlRepository repository;
    auto handle = repository.module("tcp");
    ASSERT_TRUE(handle);
    auto listeners = handle.as<ptl::Module>()->listen({{}, /*serve_local_clients=*/true});
    ASSERT_TRUE(listeners.ok()) << listeners.status().message();
    EXPECT_FALSE(listeners.value().empty());
}

// --- the ptl base: which transports local clients depend on ------------------------

// How many listeners ptl_tcp opens for a server without tool support, with the
// transports the ptl base selected from `env`.
std::size_t tcp_listeners_for_plain_server(std::initializer_list<Env::value_type> env) {
    PtlRepository repository(env);
    auto transports = pmixpp::ptl_base::Transports::open(repository.repository());
    if (!transports.ok()) {
        ADD_FAILURE() << transports.status().message();
        return 0;
    }
    const auto &names = transports.value()->names();
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (names[i] != "ptl_tcp") continue;
        auto listeners = transports.value()->listen(*transports.value()->modules()[i], {});
        if (!listeners.ok()) {
            ADD_FAILURE() << listeners.status().message();
            return 0;
        }
        return listeners.value().size();
    }
    ADD_FAILURE() << "ptl_tcp was not selected";
    return 0;
}

TEST(PtlBaseLocalClients, TcpListensOnlyForToolsWhileUsockServesLocalClients) {
    EXPECT_EQ(tcp_listeners_for_plain_server({}), 0u);
}

TEST(PtlBaseLocalClients, NamingTcpInTheSelectionMakesItListen) {
    EXPECT_GT(tcp_listeners_for_plain_server({{"ptl", "usock,tcp"}}), 0u);
    EXPECT_GT(tcp_listeners_for_plain_server({{"ptl", "tcp"}}), 0u);
}

TEST(PtlBaseLocalClients, LeavingUsockOutMakesTcpListen) {
    EXPECT_GT(tcp_listeners_for_plain_server({{"ptl", "^usock"}}), 0u);
}

TEST(PtlBaseLocalClients, TcpAboveUsockInPriorityServesLocalClients) {
    EXPECT_GT(tcp_listeners_for_plain_server({{"ptl_tcp_priority", "90"}}), 0u);
}

TEST(PtlBaseLocalClients, UsockIsToldItServesLocalClients) {
    PtlRepository repository;
    auto transports = pmixpp::ptl_base::Transports::open(repository.repository());
    ASSERT_TRUE(transports.ok()) << transports.status().message();
    ASSERT_EQ(transports.value()->names().front(), "ptl_usock");
    EXPECT_TRUE(transports.value()->serves_local_clients(*transports.value()->modules().front()));
    EXPECT_FALSE(transports.value()->serves_local_clients(*transports.value()->modules().back()));
}

TEST(TcpParameters, PortParameterFixesThePort) {
    const unsigned port = closed_port();
    PtlRepository repository({{"ptl_tcp_port", std::to_string(port)},
                              {"ptl_tcp_ipv6", "0"},
                              {"ptl_tcp_listen", "always"}});
    auto handle = repository.module("tcp");
    ASSERT_TRUE(handle);
    auto listeners = handle.as<ptl::Module>()->listen({});
    ASSERT_TRUE(listeners.ok()) << listeners.status().message();
    ASSERT_EQ(listeners.value().size(), 1u);
    EXPECT_EQ(listeners.value()[0]->uri(), "tcp4://127.0.0.1:" + std::to_string(port));
}

TEST(TcpParameters, IfIncludeParameterChoosesTheAddresses) {
    PtlRepository repository({{"ptl_tcp_if_include", "127.0.0.1"}, {"ptl_tcp_listen", "always"}});
    auto handle = repository.module("tcp");
    ASSERT_TRUE(handle);
    auto listeners = handle.as<ptl::Module>()->listen({});
    ASSERT_TRUE(listeners.ok()) << listeners.status().message();
    ASSERT_EQ(listeners.value().size(), 1u);
    EXPECT_THAT(listeners.value()[0]->uri(), StartsWith("tcp4://127.0.0.1:"));
}

TEST(TcpParameters, DisabledIpv6IsNeitherListenedOnNorConnectedTo) {
    PtlRepository repository({{"ptl_tcp_ipv6", "false"}, {"ptl_tcp_listen", "always"}});
    auto handle = repository.module("tcp");
    ASSERT_TRUE(handle);
    auto *module = handle.as<ptl::Module>();
    EXPECT_TRUE(module->handles_uri("tcp4://127.0.0.1:4711"));
    EXPECT_FALSE(module->handles_uri("tcp6://[::1]:4711"));
    auto listeners = module->listen({});
    ASSERT_TRUE(listeners.ok());
    for (const auto &listener : listeners.value()) {
        EXPECT_THAT(listener->uri(), StartsWith("tcp4://"));
    }
    auto connection = module->connect("tcp6://[::1]:4711", 1s);
    ASSERT_FALSE(connection.ok());
    EXPECT_EQ(connection.status().code(), PMIX_ERR_UNREACH);
    EXPECT_THAT(connection.status().message(), HasSubstr("tcp6://[::1]:4711"));
}

}  // namespace
