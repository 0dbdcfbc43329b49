// ptl_usock over real AF_UNIX sockets: listen, connect, accept, credentials
// (this process and forked children), socket file life cycle, errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>

#include "ptl_test_support.hpp"

namespace {

using namespace ptltest;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The socket path of a usock URI.
std::string path_of(const std::string &uri) {
    return uri.substr(std::string_view("usock://").size());
}

// Socket files in the tmpdir (ptl_usock_abstract=0); the abstract names of
// the default are tested at the end.
struct UsockFixture : ::testing::Test {
    // The listener of a server whose PMIX_SERVER_TMPDIR is `dir.path()`.
    std::unique_ptr<ptl::Listener> listen_in_tmpdir() {
        ServerInfo info;
        info.string(PMIX_SERVER_TMPDIR, dir.path());
        auto listeners = module->listen({info.span()});
        if (!listeners.ok()) {
            ADD_FAILURE() << listeners.status().message();
            return nullptr;
        }
        if (listeners.value().size() != 1) {
            ADD_FAILURE() << "expected one listener, got " << listeners.value().size();
            return nullptr;
        }
        return std::move(listeners.value().front());
    }

    TempDir dir;
    PtlRepository repository{{{"ptl_usock_abstract", "0"}}};
    mca::ModuleHandle handle = repository.module("usock");
    ptl::Module *module = handle.as<ptl::Module>();
};

TEST_F(UsockFixture, ListenerSocketLivesInTheServerTmpdirAndIsNamedAfterThePid) {
    ASSERT_NE(module, nullptr);
    auto listener = listen_in_tmpdir();
    ASSERT_NE(listener, nullptr);
    EXPECT_THAT(listener->uri(), StartsWith("usock://" + dir.path() + "/"));
    EXPECT_THAT(listener->uri(), HasSubstr(std::to_string(::getpid())));
    EXPECT_TRUE(module->handles_uri(listener->uri()));
    EXPECT_TRUE(is_nonblocking_and_cloexec(listener->fd()));
    struct stat st {};
    ASSERT_EQ(::stat(path_of(listener->uri()).c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
}

TEST_F(UsockFixture, TwoListenersOfOneProcessGetTwoSockets) {
    ASSERT_NE(module, nullptr);
    auto first = listen_in_tmpdir();
    auto second = listen_in_tmpdir();
    ASSERT_NE(first, nullptr);
    ASSERT_NE(second, nullptr);
    EXPECT_NE(first->uri(), second->uri());
}

TEST_F(UsockFixture, ConnectAndAcceptGiveNonBlockingSocketsThatCarryBytesBothWays) {
    ASSERT_NE(module, nullptr);
    auto listener = listen_in_tmpdir();
    ASSERT_NE(listener, nullptr);
    auto client = module->connect(listener->uri(), 2s);
    ASSERT_TRUE(client.ok()) << client.status().message();
    auto server = accept_one(*listener);
    ASSERT_NE(server, nullptr);

    EXPECT_TRUE(is_nonblocking_and_cloexec(client.value()->fd()));
    EXPECT_TRUE(is_nonblocking_and_cloexec(server->fd()));
    expect_bytes_flow(*client.value(), *server, "hello server");
    expect_bytes_flow(*server, *client.value(), "hello client");
    EXPECT_THAT(client.value()->describe_peer(), HasSubstr(listener->uri()));
    EXPECT_THAT(server->describe_peer(), HasSubstr(listener->uri()));
}

TEST_F(UsockFixture, PeerCredentialsOnBothEndsAreThisProcess) {
    ASSERT_NE(module, nullptr);
    auto listener = listen_in_tmpdir();
    ASSERT_NE(listener, nullptr);
    auto client = module->connect(listener->uri(), 2s);
    ASSERT_TRUE(client.ok()) << client.status().message();
    auto server = accept_one(*listener);
    ASSERT_NE(server, nullptr);

    for (const auto *connection : {client.value().get(), server.get()}) {
        const auto cred = connection->peer_credentials();
        ASSERT_TRUE(cred.has_value());
        EXPECT_EQ(cred->uid, ::geteuid());
        EXPECT_EQ(cred->gid, ::getegid());
        EXPECT_EQ(cred->pid, ::getpid());
    }
}

TEST_F(UsockFixture, AcceptedPeerCredentialsNameTheForkedChildThatConnected) {
    ASSERT_NE(module, nullptr);
    auto listener = listen_in_tmpdir();
    ASSERT_NE(listener, nullptr);
    const std::string uri = listener->uri();

    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        auto connection = module->connect(uri, 2s);
        const bool ok = connection.ok() && ::write(connection.value()->fd(), "x", 1) == 1;
        ::_exit(ok ? 0 : 1);
    }
    auto server = accept_one(*listener);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_NE(server, nullptr);
    const auto cred = server->peer_credentials();
    ASSERT_TRUE(cred.has_value());
    EXPECT_EQ(cred->pid, child);
    EXPECT_EQ(cred->uid, ::geteuid());
    EXPECT_THAT(server->describe_peer(), HasSubstr("pid " + std::to_string(child)));
}

TEST_F(UsockFixture, ClientSeesTheCredentialsOfAServerInAForkedChild) {
    ASSERT_NE(module, nullptr);
    int uri_pipe[2];
    ASSERT_EQ(::pipe(uri_pipe), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::close(uri_pipe[0]);
        ServerInfo info;
        info.string(PMIX_SERVER_TMPDIR, dir.path());
        auto listeners = module->listen({info.span()});
        if (!listeners.ok() || listeners.value().empty()) ::_exit(1);
        auto &listener = *listeners.value().front();
        const std::string uri = listener.uri() + "\n";
        if (::write(uri_pipe[1], uri.data(), uri.size()) != static_cast<ssize_t>(uri.size())) {
            ::_exit(2);
        }
        // Serve one connection until the parent has looked at it.
        if (!wait_readable(listener.fd())) ::_exit(3);
        auto connection = listener.accept();
        if (!connection.ok() || !wait_readable(connection.value()->fd())) ::_exit(4);
        char byte = 0;
        ::_exit(::read(connection.value()->fd(), &byte, 1) == 1 ? 0 : 5);
    }
    ::close(uri_pipe[1]);
    std::string uri;
    char c = 0;
    while (::read(uri_pipe[0], &c, 1) == 1 && c != '\n') uri += c;
    ::close(uri_pipe[0]);

    auto client = module->connect(uri, 2s);
    ASSERT_TRUE(client.ok()) << client.status().message();
    const auto cred = client.value()->peer_credentials();
    ASSERT_TRUE(cred.has_value());
    EXPECT_EQ(cred->pid, child);
    EXPECT_EQ(cred->uid, ::geteuid());
    ASSERT_EQ(::write(client.value()->fd(), "x", 1), 1);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
}

TEST_F(UsockFixture, SocketFileIsRemovedWhenTheListenerIsDestroyed) {
    ASSERT_NE(module, nullptr);
    auto listener = listen_in_tmpdir();
    ASSERT_NE(listener, nullptr);
    const std::string path = path_of(listener->uri());
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    listener.reset();
    errno = 0;
    EXPECT_NE(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(errno, ENOENT);
}

TEST_F(UsockFixture, AcceptWithNothingPendingIsWouldBlockAndTheListenerStaysUsable) {
    ASSERT_NE(module, nullptr);
    auto listener = listen_in_tmpdir();
    ASSERT_NE(listener, nullptr);
    auto nothing = listener->accept();
    ASSERT_FALSE(nothing.ok());
    EXPECT_EQ(nothing.status().code(), PMIX_ERR_WOULD_BLOCK);

    auto client = module->connect(listener->uri(), 2s);
    ASSERT_TRUE(client.ok()) << client.status().message();
    EXPECT_NE(accept_one(*listener), nullptr);
}

TEST_F(UsockFixture, ConnectToAMissingSocketIsUnreachableAndNamesTheUri) {
    ASSERT_NE(module, nullptr);
    const std::string uri = "usock://" + dir.path() + "/nobody-listens-here";
    auto connection = module->connect(uri, 1s);
    ASSERT_FALSE(connection.ok());
    EXPECT_EQ(connection.status().code(), PMIX_ERR_UNREACH);
    EXPECT_THAT(connection.status().message(), HasSubstr(uri));
}

TEST_F(UsockFixture, ConnectToAClosedListenerIsUnreachable) {
    ASSERT_NE(module, nullptr);
    // A socket file that nobody listens on any more.
    const std::string path = dir.path() + "/closed";
    {
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strcpy(address.sun_path, path.c_str());
        ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address)), 0);
        ::close(fd);
    }
    auto connection = module->connect("usock://" + path, 1s);
    ASSERT_FALSE(connection.ok());
    EXPECT_EQ(connection.status().code(), PMIX_ERR_UNREACH);
    EXPECT_THAT(connection.status().message(), HasSubstr("usock://" + path));
}

TEST_F(UsockFixture, MalformedUrisAreBadParam) {
    ASSERT_NE(module, nullptr);
    const std::vector<std::string> uris = {"usock://",     "usock://relative/path",
                                           "usock:/tmp/s", "tcp4://127.0.0.1:4711",
                                           "usock://@",    std::string("usock:///tmp/a\0b", 16)};
    for (const std::string &uri : uris) {
        auto connection = module->connect(uri, 1s);
        ASSERT_FALSE(connection.ok()) << uri;
        EXPECT_EQ(connection.status().code(), PMIX_ERR_BAD_PARAM) << uri;
        EXPECT_THAT(connection.status().message(), HasSubstr("malformed URI")) << uri;
    }
}

TEST_F(UsockFixture, TooLongSocketPathIsRefusedWithItsLengthAndTheLimit) {
    ASSERT_NE(module, nullptr);
    const std::string long_dir = dir.path() + "/" + std::string(120, 'd');
    ServerInfo info;
    info.string(PMIX_SERVER_TMPDIR, long_dir);
    auto listeners = module->listen({info.span()});
    ASSERT_FALSE(listeners.ok());
    EXPECT_EQ(listeners.status().code(), PMIX_ERR_BAD_PARAM);
    EXPECT_THAT(listeners.status().message(), HasSubstr(long_dir));
    EXPECT_THAT(listeners.status().message(), HasSubstr("at most 107 bytes"));
    EXPECT_THAT(listeners.status().message(), HasSubstr("PMIX_SERVER_TMPDIR"));

    const std::string uri = "usock://" + long_dir + "/s";
    auto connection = module->connect(uri, 1s);
    ASSERT_FALSE(connection.ok());
    EXPECT_EQ(connection.status().code(), PMIX_ERR_BAD_PARAM);
    EXPECT_THAT(connection.status().message(), HasSubstr(uri));
    EXPECT_THAT(connection.status().message(), HasSubstr("at most 107 bytes"));
}

TEST_F(UsockFixture, MissingTmpdirIsAnErrorNamingThePath) {
    ASSERT_NE(module, nullptr);
    ServerInfo info;
    info.string(PMIX_SERVER_TMPDIR, dir.path() + "/missing");
    auto listeners = module->listen({info.span()});
    ASSERT_FALSE(listeners.ok());
    EXPECT_THAT(listeners.status().message(), HasSubstr(dir.path() + "/missing/"));
    EXPECT_THAT(listeners.status().message(), HasSubstr("No such file or directory"));
}

// A listener whose backlog is full and that never accepts: a blocking
// connect would wait forever.
TEST_F(UsockFixture, ConnectGivesUpWithTimeoutWhileTheBacklogStaysFull) {
    ASSERT_NE(module, nullptr);
    const std::string path = dir.path() + "/full";
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strcpy(address.sun_path, path.c_str());
    const int server = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_EQ(::bind(server, reinterpret_cast<sockaddr *>(&address), sizeof(address)), 0);
    ASSERT_EQ(::listen(server, 0), 0);
    // Fill the backlog with non-blocking connects until the kernel refuses more.
    std::vector<int> fillers;
    for (int i = 0; i < 16; ++i) {
        const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        fillers.push_back(fd);
        if (::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address)) != 0) break;
    }
    ASSERT_EQ(errno, EAGAIN) << "could not fill the backlog";

    const std::string uri = "usock://" + path;
    auto connection = module->connect(uri, 200ms);
    ASSERT_FALSE(connection.ok());
    EXPECT_EQ(connection.status().code(), PMIX_ERR_TIMEOUT);
    EXPECT_THAT(connection.status().message(), HasSubstr(uri));
    for (const int fd : fillers) ::close(fd);
    ::close(server);
}

// --- where the socket goes when the server info has no PMIX_SERVER_TMPDIR ---

TEST(UsockTmpdir, TheTmpdirParameterIsUsedWithoutServerTmpdir) {
    TempDir dir;
    PtlRepository repository({{"ptl_usock_tmpdir", dir.path()}, {"ptl_usock_abstract", "0"}});
    auto handle = repository.module("usock");
    ASSERT_TRUE(handle);
    auto listeners = handle.as<ptl::Module>()->listen({});
    ASSERT_TRUE(listeners.ok()) << listeners.status().message();
    ASSERT_EQ(listeners.value().size(), 1u);
    EXPECT_THAT(listeners.value().front()->uri(), StartsWith("usock://" + dir.path() + "/"));
}

TEST(UsockTmpdir, ServerTmpdirWinsOverTheParameter) {
    TempDir param_dir;
    TempDir server_dir;
    PtlRepository repository({{"ptl_usock_tmpdir", param_dir.path()}, {"ptl_usock_abstract", "0"}});
    auto handle = repository.module("usock");
    ASSERT_TRUE(handle);
    ServerInfo info;
    info.string(PMIX_SERVER_TMPDIR, server_dir.path());
    auto listeners = handle.as<ptl::Module>()->listen({info.span()});
    ASSERT_TRUE(listeners.ok()) << listeners.status().message();
    ASSERT_EQ(listeners.value().size(), 1u);
    EXPECT_THAT(listeners.value().front()->uri(), StartsWith("usock://" + server_dir.path() + "/"));
}

TEST(UsockTmpdir, WithoutEitherTheSocketGoesToTMPDIR) {
    TempDir dir;
    const char *saved = std::getenv("TMPDIR");
    const std::string saved_value = saved != nullptr ? saved : "";
    ::setenv("TMPDIR", dir.path().c_str(), 1);
    PtlRepository repository({{"ptl_usock_abstract", "0"}});
    auto handle = repository.module("usock");
    ASSERT_TRUE(handle);
    auto listeners = handle.as<ptl::Module>()->listen({});
    if (saved != nullptr) {
        ::setenv("TMPDIR", saved_value.c_str(), 1);
    } else {
        ::unsetenv("TMPDIR");
    }
    ASSERT_TRUE(listeners.ok()) << listeners.status().message();
    ASSERT_EQ(listeners.value().size(), 1u);
    EXPECT_THAT(listeners.value().front()->uri(), StartsWith("usock://" + dir.path() + "/"));
}

// --- the default: a name in the abstract namespace ---------------------------

struct UsockAbstract : ::testing::Test {
    std::unique_ptr<ptl::Listener> listen(std::span<const pmix_info_t> info = {}) {
        auto listeners = module->listen({info});
        if (!listeners.ok() || listeners.value().size() != 1) {
            ADD_FAILURE() << (listeners.ok() ? "not one listener" : listeners.status().message());
            return nullptr;
        }
        return std::move(listeners.value().front());
    }

    PtlRepository repository;
    mca::ModuleHandle handle = repository.module("usock");
    ptl::Module *module = handle.as<ptl::Module>();
};

TEST_F(UsockAbstract, ByDefaultTheListenerHasAnAbstractNameAndNoFile) {
    ASSERT_NE(module, nullptr);
    TempDir dir;
    ServerInfo info;
    info.string(PMIX_SERVER_TMPDIR, dir.path());
    auto listener = listen(info.span());
    ASSERT_NE(listener, nullptr);
    EXPECT_THAT(listener->uri(), StartsWith("usock://@pmixpp." + std::to_string(::getpid())));
    EXPECT_TRUE(module->handles_uri(listener->uri()));
    EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "no socket file in the tmpdir";
    auto client = module->connect(listener->uri(), 2s);
    ASSERT_TRUE(client.ok()) << client.status().message();
    auto server_side = accept_one(*listener);
    ASSERT_NE(server_side, nullptr);
    const auto cred = server_side->peer_credentials();
    ASSERT_TRUE(cred.has_value());
    EXPECT_EQ(cred->pid, ::getpid());
}

// Open MPI's orted empties the session directory it gave as
// PMIX_SERVER_TMPDIR when a second daemon starts on the same host; the
// clients forked after that must still reach their server.
TEST_F(UsockAbstract, TheServerStaysReachableWhenItsTmpdirIsRemoved) {
    ASSERT_NE(module, nullptr);
    std::string uri;
    {
        TempDir dir;
        ServerInfo info;
        info.string(PMIX_SERVER_TMPDIR, dir.path());
        auto listener = listen(info.span());
        ASSERT_NE(listener, nullptr);
        uri = listener->uri();
        std::filesystem::remove_all(dir.path());
        auto client = module->connect(uri, 2s);
        ASSERT_TRUE(client.ok()) << client.status().message();
        EXPECT_NE(accept_one(*listener), nullptr);
    }
}

TEST_F(UsockAbstract, TheNameIsGoneWithTheListener) {
    ASSERT_NE(module, nullptr);
    auto listener = listen();
    ASSERT_NE(listener, nullptr);
    const std::string uri = listener->uri();
    listener.reset();
    auto client = module->connect(uri, 1s);
    ASSERT_FALSE(client.ok());
    EXPECT_EQ(client.status().code(), PMIX_ERR_UNREACH);
    EXPECT_THAT(client.status().message(), HasSubstr(uri));
}

TEST_F(UsockAbstract, ANameHeldByAnotherSocketIsSkipped) {
    ASSERT_NE(module, nullptr);
    // Squat on the names this process would take next.
    auto probe = listen();
    ASSERT_NE(probe, nullptr);
    const std::string prefix = "@pmixpp." + std::to_string(::getpid()) + ".";
    const unsigned next = std::stoul(path_of(probe->uri()).substr(prefix.size())) + 1;
    std::vector<int> squatters;
    for (unsigned n = next; n < next + 3; ++n) {
        const std::string name = "pmixpp." + std::to_string(::getpid()) + "." + std::to_string(n);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::memcpy(address.sun_path + 1, name.data(), name.size());
        const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr *>(&address),
                         static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size())),
                  0);
        squatters.push_back(fd);
    }
    auto listener = listen();
    ASSERT_NE(listener, nullptr);
    EXPECT_EQ(listener->uri(), "usock://" + prefix + std::to_string(next + 3));
    auto client = module->connect(listener->uri(), 2s);
    EXPECT_TRUE(client.ok()) << client.status().message();
    for (const int fd : squatters) ::close(fd);
}

}  // namespace
