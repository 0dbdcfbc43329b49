#include "session_dirs.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

namespace pmixrun {

namespace {

namespace fs = std::filesystem;

// The session directory, removed with its content when pmixrun exits.
struct SessionDir {
    std::string path;
    ~SessionDir() {
        if (path.empty()) return;
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

bool make_private_dir(const std::string &path) {
    std::error_code ec;
    if (!fs::create_directory(path, ec) || ec) {
        std::fprintf(stderr, "pmixrun: cannot make %s: %s\n", path.c_str(),
                     ec ? ec.message().c_str() : "it exists");
        return false;
    }
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::replace, ec);
    return true;
}

}  // namespace

const std::string &session_dir() {
    static const SessionDir dir = [] {
        SessionDir d;
        const char *tmp = std::getenv("TMPDIR");
        std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                              "/pmixrun." + std::to_string(::getpid()) + ".XXXXXX";
        std::vector<char> buf(pattern.begin(), pattern.end());
        buf.push_back('\0');
        if (::mkdtemp(buf.data()) == nullptr) {  // mode 0700
            std::fprintf(stderr,
                         "pmixrun: cannot make a session directory %s: %s (jobs get no "
                         "PMIX_TMPDIR)\n",
                         pattern.c_str(), std::strerror(errno));
            return d;
        }
        d.path = buf.data();
        return d;
    }();
    return dir.path;
}

std::string make_job_dirs(const std::string &nspace, std::uint32_t nprocs) {
    const std::string &session = session_dir();
    if (session.empty()) return {};
    const std::string job = session + "/" + nspace;
    if (!make_private_dir(job)) return {};
    for (std::uint32_t r = 0; r < nprocs; ++r) {
        if (!make_private_dir(proc_dir(job, r))) {
            remove_job_dirs(nspace);
            return {};
        }
    }
    return job;
}

std::string proc_dir(const std::string &job_dir, std::uint32_t rank) {
    return job_dir + "/" + std::to_string(rank);
}

void remove_job_dirs(const std::string &nspace) {
    const std::string &session = session_dir();
    if (session.empty() || nspace.empty()) return;
    std::error_code ec;
    fs::remove_all(session + "/" + nspace, ec);
}

}  // namespace pmixrun
