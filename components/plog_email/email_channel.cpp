#include "email_channel.hpp"

#include <curl/curl.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <utility>

#include "pmixpp/mca/info.hpp"

namespace pmixpp::plog_email {

namespace {

namespace plog = mca::plog;

bool has_line_break(const std::string &s) {
    return s.find_first_of("\r\n") != std::string::npos;
}

std::string trim(const std::string &s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> split_addresses(const std::string &list) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= list.size()) {
        std::size_t end = list.find(',', start);
        if (end == std::string::npos) end = list.size();
        std::string a = trim(list.substr(start, end - start));
        if (!a.empty()) out.push_back(a);
        start = end + 1;
    }
    return out;
}

std::string source_tag(const pmix_proc_t &p) {
    return std::string(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN)) + ":" + std::to_string(p.rank);
}

std::string hostname() {
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') return "localhost";
    return host;
}

// The upload: the composed message, handed to libcurl in pieces.
struct Upload {
    std::string data;
    std::size_t offset = 0;
};

std::size_t read_upload(char *buffer, std::size_t size, std::size_t nitems, void *userdata) {
    auto *up = static_cast<Upload *>(userdata);
    const std::size_t n = std::min(size * nitems, up->data.size() - up->offset);
    std::memcpy(buffer, up->data.data() + up->offset, n);
    up->offset += n;
    return n;
}

int abort_if_stopping(void *clientp, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    return static_cast<std::atomic<bool> *>(clientp)->load() ? 1 : 0;
}

}  // namespace

pmix_status_t parse_entry(const pmix_info_t &entry, const Config &config, Message &out,
                          std::string &why) {
    if (entry.value.type != PMIX_DATA_ARRAY || entry.value.data.darray == nullptr ||
        entry.value.data.darray->type != PMIX_INFO ||
        (entry.value.data.darray->size > 0 && entry.value.data.darray->array == nullptr)) {
        why = "PMIX_LOG_EMAIL must hold a pmix_data_array_t of pmix_info_t";
        return PMIX_ERR_BAD_PARAM;
    }
    std::span<const pmix_info_t> fields(
        static_cast<const pmix_info_t *>(entry.value.data.darray->array),
        entry.value.data.darray->size);
    out.server = mca::info_string(fields, PMIX_LOG_EMAIL_SERVER).value_or(config.server);
    out.port = config.port;
    if (const pmix_info_t *p = mca::find_info(fields, PMIX_LOG_EMAIL_SRVR_PORT)) {
        const auto port = mca::as_int(p->value);
        if (!port || *port <= 0 || *port > 65535) {
            why = "PMIX_LOG_EMAIL_SRVR_PORT must be a port number (1-65535)";
            return PMIX_ERR_BAD_PARAM;
        }
        out.port = static_cast<int>(*port);
    }
    out.sender = mca::info_string(fields, PMIX_LOG_EMAIL_SENDER_ADDR).value_or(config.sender);
    if (out.sender.empty()) out.sender = "pmix@" + hostname();
    out.recipients = split_addresses(mca::info_string(fields, PMIX_LOG_EMAIL_ADDR).value_or(""));
    if (out.recipients.empty()) {
        why = "no recipient (PMIX_LOG_EMAIL_ADDR)";
        return PMIX_ERR_BAD_PARAM;
    }
    auto body = mca::info_string(fields, PMIX_LOG_EMAIL_MSG);
    if (!body) body = mca::info_string(fields, PMIX_LOG_MSG);
    if (!body) {
        why = "no message (PMIX_LOG_EMAIL_MSG or PMIX_LOG_MSG)";
        return PMIX_ERR_BAD_PARAM;
    }
    out.body = *body;
    out.subject = mca::info_string(fields, PMIX_LOG_EMAIL_SUBJECT).value_or("");
    // A line break in a header would let the caller write headers of its own.
    if (has_line_break(out.subject) || has_line_break(out.sender) || has_line_break(out.server)) {
        why = "a line break in the subject, sender or server";
        return PMIX_ERR_BAD_PARAM;
    }
    for (const auto &r : out.recipients) {
        if (has_line_break(r)) {
            why = "a line break in a recipient";
            return PMIX_ERR_BAD_PARAM;
        }
    }
    return PMIX_SUCCESS;
}

std::string compose(const Message &m) {
    char date[64];
    std::tm tm{};
    gmtime_r(&m.when, &tm);
    std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S +0000", &tm);
    std::string to;
    for (const auto &r : m.recipients) to += (to.empty() ? "" : ", ") + r;
    std::string out =
        std::string("Date: ") + date + "\r\nFrom: " + m.sender + "\r\nTo: " + to +
        "\r\nSubject: " + (m.subject.empty() ? "PMIx log from " + m.source : m.subject) +
        "\r\nX-PMIx-Source: " + m.source +
        "\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n";
    // Body lines end in CRLF; libcurl dot-stuffs the lines that start with '.'.
    for (std::size_t i = 0; i < m.body.size(); ++i) {
        if (m.body[i] == '\n' && (i == 0 || m.body[i - 1] != '\r')) out += '\r';
        out += m.body[i];
    }
    if (out.size() < 2 || out.compare(out.size() - 2, 2, "\r\n") != 0) out += "\r\n";
    return out;
}

EmailChannel::EmailChannel(Config config) : config_(std::move(config)) {}

EmailChannel::~EmailChannel() {
    stopping_ = true;  // running sends abort at their next progress callback
    for (auto &w : workers_) {
        if (!w.thread.joinable()) continue;
        if (w.thread.get_id() == std::this_thread::get_id()) {
            w.thread.detach();  // destroyed from its own completion: it is finishing
        } else {
            w.thread.join();
        }
    }
}

void EmailChannel::reap_finished() {
    std::lock_guard lock(mutex_);
    for (auto it = workers_.begin(); it != workers_.end();) {
        if (it->finished) {
            if (it->thread.joinable()) it->thread.join();
            it = workers_.erase(it);
        } else {
            ++it;
        }
    }
}

void EmailChannel::log(const pmix_proc_t &source, std::span<const pmix_info_t> entries,
                       std::span<const pmix_info_t> directives, plog::LogCompletion done) {
    reap_finished();
    std::time_t when = std::time(nullptr);
    if (const pmix_info_t *t = mca::find_info(directives, PMIX_LOG_TIMESTAMP);
        t != nullptr && t->value.type == PMIX_TIME) {
        when = t->value.data.time;
    }
    auto results = std::make_shared<std::vector<plog::EntryResult>>(entries.size());
    std::vector<std::pair<std::size_t, Message>> to_send;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        Message m;
        std::string why;
        if (pmix_status_t rc = parse_entry(entries[i], config_, m, why); rc != PMIX_SUCCESS) {
            (*results)[i] = plog::EntryResult(rc, why);
            continue;
        }
        m.when = when;
        m.source = source_tag(source);
        to_send.emplace_back(i, std::move(m));
    }
    if (to_send.empty()) {
        done(std::move(*results));
        return;
    }
    std::lock_guard lock(mutex_);
    workers_.emplace_back();
    Worker *self = &workers_.back();
    self->thread = std::thread(
        [this, self, results, to_send = std::move(to_send), done = std::move(done)]() mutable {
            for (const auto &[i, m] : to_send) (*results)[i] = send(m);
            {
                std::lock_guard lock(mutex_);
                self->finished = true;
            }
            // Last, touching nothing of the module: the completion may drop the
            // last reference to it (the destructor then runs on this thread).
            done(std::move(*results));
        });
}

plog::EntryResult EmailChannel::send(const Message &m) {
    std::unique_ptr<CURL, void (*)(CURL *)> curl(curl_easy_init(), curl_easy_cleanup);
    if (!curl) return {PMIX_ERR_OUT_OF_RESOURCE, "curl_easy_init failed"};
    CURL *c = curl.get();
    const std::string host =
        m.server.find(':') != std::string::npos ? "[" + m.server + "]" : m.server;
    const std::string url = "smtp://" + host + ":" + std::to_string(m.port);
    const std::string from = "<" + m.sender + ">";
    struct curl_slist *rcpt = nullptr;
    for (const auto &r : m.recipients) rcpt = curl_slist_append(rcpt, ("<" + r + ">").c_str());
    std::unique_ptr<curl_slist, void (*)(curl_slist *)> keep_rcpt(rcpt, curl_slist_free_all);
    Upload upload{compose(m), 0};
    char error[CURL_ERROR_SIZE] = {};
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_MAIL_FROM, from.c_str());
    curl_easy_setopt(c, CURLOPT_MAIL_RCPT, rcpt);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, read_upload);
    curl_easy_setopt(c, CURLOPT_READDATA, &upload);
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, static_cast<long>(config_.timeout_s));
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, static_cast<long>(config_.timeout_s));
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, abort_if_stopping);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &stopping_);
    const CURLcode rc = curl_easy_perform(c);
    if (rc == CURLE_OK) return {PMIX_SUCCESS};
    long reply = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &reply);
    const std::string where = "SMTP " + m.server + ":" + std::to_string(m.port) + ": ";
    const std::string detail = error[0] != '\0' ? error : curl_easy_strerror(rc);
    if (reply >= 400) {
        return {PMIX_ERROR,
                where + "the server answered " + std::to_string(reply) + " (" + detail + ")"};
    }
    switch (rc) {
        case CURLE_COULDNT_CONNECT:
        case CURLE_COULDNT_RESOLVE_HOST:
            return {PMIX_ERR_UNREACH, where + detail};
        case CURLE_OPERATION_TIMEDOUT:
            return {PMIX_ERR_TIMEOUT, where + "no answer within plog_email_timeout = " +
                                          std::to_string(config_.timeout_s) + " s (" + detail +
                                          ")"};
        case CURLE_ABORTED_BY_CALLBACK:
            return {PMIX_ERR_COMM_FAILURE, where + "abandoned: the server is finalizing"};
        default:
            return {PMIX_ERR_COMM_FAILURE, where + detail};
    }
}

}  // namespace pmixpp::plog_email
