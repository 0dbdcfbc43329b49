// wire/rendezvous.hpp: the rendezvous file format, its lenient reading of
// user-written attachment files, and the session-server listing.
#include "wire/rendezvous.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace {

using pmixpp::wire::Rendezvous;

struct TempDir {
    TempDir() {
        char templ[] = "/tmp/pmixpp-rdv-test.XXXXXX";
        path = ::mkdtemp(templ);
    }
    ~TempDir() { std::filesystem::remove_all(path); }
    std::string path;
};

TEST(Rendezvous, FormatParsesBack) {
    Rendezvous r;
    r.nspace = "job-1";
    r.rank = 3;
    r.pid = 4711;
    r.uris = {"usock://@pmixpp.4711.0", "tcp4://127.0.0.1:5000"};
    auto back = pmixpp::wire::parse_rendezvous(pmixpp::wire::format_rendezvous(r));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->nspace, "job-1");
    EXPECT_EQ(back->rank, 3u);
    EXPECT_EQ(back->pid, 4711);
    EXPECT_EQ(back->uris, r.uris);
}

TEST(Rendezvous, BareAndServerUriFormLines) {
    auto r = pmixpp::wire::parse_rendezvous("tcp4://127.0.0.1:1\r\nsrv.2;usock://@x\n\n");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->uris, (std::vector<std::string>{"tcp4://127.0.0.1:1", "usock://@x"}));
    EXPECT_EQ(r->nspace, "srv");
    EXPECT_EQ(r->rank, 2u);
}

TEST(Rendezvous, NoUriOrGarbageIsNothing) {
    EXPECT_FALSE(pmixpp::wire::parse_rendezvous(""));
    EXPECT_FALSE(pmixpp::wire::parse_rendezvous("pmixpp-rendezvous=1\nnspace=a\n"));
    EXPECT_FALSE(pmixpp::wire::parse_rendezvous("just some text\n"));
    EXPECT_FALSE(pmixpp::wire::parse_rendezvous("pid=abc\nuri=usock://@x\n"));
}

TEST(Rendezvous, ListingSkipsDeadServersAndNamespaceTwins) {
    TempDir dir;
    const pid_t dead = ::fork();
    ASSERT_GE(dead, 0);
    if (dead == 0) ::_exit(0);
    ASSERT_EQ(::waitpid(dead, nullptr, 0), dead);  // reaped: its pid runs nothing now
    auto put = [&](const std::string &tag, pid_t pid, const std::string &ns) {
        Rendezvous r;
        r.nspace = ns;
        r.pid = pid;
        r.uris = {"usock://@" + ns};
        std::ofstream(dir.path + "/" + pmixpp::wire::session_rendezvous_name(tag))
            << pmixpp::wire::format_rendezvous(r);
    };
    put(std::to_string(::getpid()), ::getpid(), "alive");
    put("alive", ::getpid(), "alive");  // the nspace-tagged twin: not listed twice
    put(std::to_string(dead), dead, "dead");
    auto list = pmixpp::wire::list_session_servers(dir.path);
    ASSERT_EQ(list.size(), 1u);
    EXPECT_EQ(list[0].nspace, "alive");
    EXPECT_EQ(list[0].pid, ::getpid());
}

TEST(Rendezvous, ExclusiveCreateRefusesAnExistingFile) {
    TempDir dir;
    const std::string path = dir.path + "/f";
    EXPECT_EQ(pmixpp::wire::create_exclusively(path, "a", 0600), 0);
    EXPECT_EQ(pmixpp::wire::create_exclusively(path, "b", 0600), EEXIST);
    EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
              std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

}  // namespace
