#include "syslog_channel.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "pmixpp/mca/info.hpp"

namespace pmixpp::plog_syslog {

namespace {

namespace plog = mca::plog;

constexpr int kDefaultSeverity = 3;  // LOG_ERR: the spec's default priority

struct Facility {
    const char *name;
    int code;
};
// RFC 5424 §6.2.1 numbering (the same as <syslog.h>'s LOG_* >> 3).
constexpr std::array<Facility, 20> kFacilities = {
    {{"kern", 0},      {"user", 1},    {"mail", 2},    {"daemon", 3},  {"auth", 4},
     {"syslog", 5},    {"lpr", 6},     {"news", 7},    {"uucp", 8},    {"cron", 9},
     {"authpriv", 10}, {"ftp", 11},    {"local0", 16}, {"local1", 17}, {"local2", 18},
     {"local3", 19},   {"local4", 20}, {"local5", 21}, {"local6", 22}, {"local7", 23}}};

std::string source_tag(const pmix_proc_t &p) {
    std::string ns(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN));
    if (p.rank == PMIX_RANK_WILDCARD) return ns + ":*";
    return ns + ":" + std::to_string(p.rank);
}

}  // namespace

int facility_code(const std::string &name) {
    for (const auto &f : kFacilities) {
        if (name == f.name) return f.code;
    }
    return -1;
}

const std::vector<std::string> &facility_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const auto &f : kFacilities) out.emplace_back(f.name);
        return out;
    }();
    return names;
}

std::string format_record(Format format, int pri, std::time_t when, const std::string &hostname,
                          const std::string &ident, long pid, const std::string &source,
                          const std::string &message) {
    std::tm tm{};
    char stamp[64];
    if (format == Format::rfc5424) {
        // <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD MSG (RFC 5424 §6)
        gmtime_r(&when, &tm);
        std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
        return "<" + std::to_string(pri) + ">1 " + stamp + " " +
               (hostname.empty() ? std::string("-") : hostname) + " " + ident + " " +
               std::to_string(pid) + " - - " + source + ": " + message;
    }
    // <PRI>Mmm dd hh:mm:ss TAG[pid]: MSG, as the local /dev/log convention
    // has it (RFC 3164 §4.1 without HOSTNAME: the local daemon adds its own).
    localtime_r(&when, &tm);
    static constexpr const char *kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    std::snprintf(stamp, sizeof stamp, "%s %2d %02d:%02d:%02d", kMonths[tm.tm_mon % 12], tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec);
    return "<" + std::to_string(pri) + ">" + stamp + " " + ident + "[" + std::to_string(pid) +
           "]: " + source + ": " + message;
}

SyslogChannel::SyslogChannel(Config config) : config_(std::move(config)) {
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) == 0) hostname_ = host;
}

SyslogChannel::~SyslogChannel() {
    if (fd_ >= 0) close(fd_);
}

std::vector<std::string> SyslogChannel::channels() const {
    return {PMIX_LOG_SYSLOG, PMIX_LOG_LOCAL_SYSLOG, PMIX_LOG_GLOBAL_SYSLOG};
}

void SyslogChannel::log(const pmix_proc_t &source, std::span<const pmix_info_t> entries,
                        std::span<const pmix_info_t> directives, plog::LogCompletion done) {
    const bool gateway = mca::info_flag(directives, plog::kGatewayDirective).value_or(false);
    // PMIX_LOG_SYSLOG_PRI: a severity (0-7), or a whole priority with a
    // facility (as syslog(3) takes it: LOG_LOCAL0 | LOG_INFO).
    int pri = config_.facility * 8 + kDefaultSeverity;
    std::string bad_pri;
    if (const pmix_info_t *p = mca::find_info(directives, PMIX_LOG_SYSLOG_PRI)) {
        const auto v = mca::as_int(p->value);
        if (!v || *v < 0 || *v > 23 * 8 + 7) {
            bad_pri = "PMIX_LOG_SYSLOG_PRI must be an integer syslog priority (0-191)";
        } else if (*v < 8) {
            pri = config_.facility * 8 + static_cast<int>(*v);
        } else {
            pri = static_cast<int>(*v);
        }
    }
    std::time_t when = std::time(nullptr);
    if (const pmix_info_t *t = mca::find_info(directives, PMIX_LOG_TIMESTAMP);
        t != nullptr && t->value.type == PMIX_TIME) {
        when = t->value.data.time;
    }
    const std::string tag = source_tag(source);
    std::vector<plog::EntryResult> results;
    for (const pmix_info_t &entry : entries) {
        if (mca::info_key(entry) == PMIX_LOG_GLOBAL_SYSLOG && !gateway) {
            // Not the gateway: the host forwards it to the global syslog.
            results.emplace_back(mca::kStatusDeclined);
            continue;
        }
        if (!bad_pri.empty()) {
            results.emplace_back(PMIX_ERR_BAD_PARAM, bad_pri);
            continue;
        }
        if (entry.value.type != PMIX_STRING || entry.value.data.string == nullptr) {
            results.emplace_back(PMIX_ERR_BAD_PARAM, "a syslog entry's value must be a string");
            continue;
        }
        results.push_back(
            send(format_record(config_.format, pri, when, hostname_, config_.ident,
                               static_cast<long>(getpid()), tag, entry.value.data.string)));
    }
    done(std::move(results));
}

plog::EntryResult SyslogChannel::send(const std::string &record) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (config_.socket_path.empty() || config_.socket_path.size() >= sizeof addr.sun_path) {
        return {PMIX_ERR_UNREACH,
                "plog_syslog_socket '" + config_.socket_path + "' is not a usable socket path"};
    }
    std::memcpy(addr.sun_path, config_.socket_path.c_str(), config_.socket_path.size() + 1);
    if (fd_ < 0) {
        fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd_ < 0) {
            return {PMIX_ERR_OUT_OF_RESOURCE, std::string("socket: ") + std::strerror(errno)};
        }
    }
    // Never blocks the progress thread: a daemon that does not keep up is an error.
    const ssize_t sent = sendto(fd_, record.data(), record.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                                reinterpret_cast<const sockaddr *>(&addr), sizeof addr);
    if (sent == static_cast<ssize_t>(record.size())) return {PMIX_SUCCESS};
    const int err = errno;
    const std::string why =
        "send to " + config_.socket_path + ": " + (sent < 0 ? std::strerror(err) : "short write");
    if (sent >= 0) return {PMIX_ERROR, why};
    if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS)
        return {PMIX_ERR_OUT_OF_RESOURCE, why};
    return {PMIX_ERR_UNREACH, why};
}

}  // namespace pmixpp::plog_syslog
