#include "file_watch.hpp"

#include <sys/stat.h>

namespace pmixpp::psensor_file {

namespace {

bool same(const timespec &a, const timespec &b) {
    return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

}  // namespace

std::optional<FileSample> stat_file(const std::string &path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    FileSample s;
    s.size = st.st_size;
    s.atime = st.st_atim;
    s.mtime = st.st_mtim;
    return s;
}

std::string Criteria::describe() const {
    std::string out;
    auto add = [&](bool on, const char *name) {
        if (!on) return;
        if (!out.empty()) out += ", ";
        out += name;
    };
    add(size, "size");
    add(access, "access");
    add(modify, "modify");
    return out;
}

bool FileWatch::changed(const FileSample &now) const {
    if (!previous_) return true;  // it appeared
    const FileSample &then = *previous_;
    return (criteria_.size && now.size > then.size) ||
           (criteria_.access && !same(now.atime, then.atime)) ||
           (criteria_.modify && !same(now.mtime, then.mtime));
}

bool FileWatch::observe(const std::optional<FileSample> &sample) {
    bool hit;
    if (first_) {
        // The baseline: nothing to compare with, but a missing file is a miss.
        first_ = false;
        hit = sample.has_value();
    } else {
        hit = sample.has_value() && changed(*sample);
    }
    previous_ = sample;
    if (hit) {
        misses_ = 0;
        stalled_ = false;
        return false;
    }
    ++misses_;
    if (stalled_ || misses_ <= drops_) return false;
    stalled_ = true;
    return true;
}

}  // namespace pmixpp::psensor_file
