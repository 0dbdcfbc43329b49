#include "server/client_table.hpp"

#include <sys/random.h>

#include <algorithm>
#include <cstring>

#include <spdlog/fmt/fmt.h>

namespace pmixpp::server {

namespace {

std::string random_secret() {
    unsigned char raw[16] = {};
    std::size_t got = 0;
    while (got < sizeof raw) {
        ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    std::string out;
    for (unsigned char c : raw) out += fmt::format("{:02x}", c);
    return out;
}

}  // namespace

std::string describe(const ProcKey &key) {
    if (key.second == PMIX_RANK_WILDCARD) return key.first + ":*";
    return key.first + ":" + std::to_string(key.second);
}

ProcKey key_of(const pmix_proc_t &proc) {
    return {std::string(proc.nspace, strnlen(proc.nspace, PMIX_MAX_NSLEN)), proc.rank};
}

pmix_proc_t proc_of(const ProcKey &key) {
    pmix_proc_t p{};
    std::memcpy(p.nspace, key.first.data(),
                std::min<std::size_t>(key.first.size(), PMIX_MAX_NSLEN));
    p.rank = key.second;
    return p;
}

const char *to_string(Departure why) {
    switch (why) {
        case Departure::finalized:
            return "finalized";
        case Departure::lost:
            return "lost";
        case Departure::deregistered:
            return "deregistered";
    }
    return "?";
}

JobRecord &ClientTable::job(const std::string &nspace) {
    JobRecord &job = jobs_[nspace];
    job.nspace = nspace;
    if (job.secret.empty()) job.secret = random_secret();
    return job;
}

JobRecord *ClientTable::find_job(const std::string &nspace) {
    auto it = jobs_.find(nspace);
    return it == jobs_.end() ? nullptr : &it->second;
}

const JobRecord *ClientTable::find_job(const std::string &nspace) const {
    auto it = jobs_.find(nspace);
    return it == jobs_.end() ? nullptr : &it->second;
}

ClientRecord *ClientTable::find_client(const ProcKey &key) {
    JobRecord *j = find_job(key.first);
    if (j == nullptr) return nullptr;
    auto it = j->clients.find(key.second);
    return it == j->clients.end() ? nullptr : &it->second;
}

ClientRecord &ClientTable::register_client(const pmix_proc_t &proc, uid_t uid, gid_t gid,
                                           void *server_object) {
    const ProcKey key = key_of(proc);
    ClientRecord &c = job(key.first).clients[key.second];
    c.proc = proc;
    c.uid = uid;
    c.gid = gid;
    c.server_object = server_object;
    return c;
}

void ClientTable::unsubscribe(DepartureListener *listener) {
    std::erase(listeners_, listener);
}

bool ClientTable::depart(const ProcKey &key, Departure why) {
    ClientRecord *c = find_client(key);
    if (c == nullptr || c->departed) return false;
    c->departed = true;
    c->state = why == Departure::lost ? ClientRecord::State::lost : ClientRecord::State::finalized;
    // A listener may remove the record (and others): work from a copy of the list.
    const auto listeners = listeners_;
    for (auto *l : listeners) l->client_departed(key, why);
    return true;
}

void ClientTable::deregister_client(const ProcKey &key) {
    depart(key, Departure::deregistered);
    erase_client(key);
}

void ClientTable::deregister_nspace(const std::string &nspace) {
    if (JobRecord *j = find_job(nspace)) {
        std::vector<ProcKey> keys;
        for (const auto &[rank, c] : j->clients) keys.emplace_back(nspace, rank);
        for (const auto &k : keys) depart(k, Departure::deregistered);
    }
    const auto listeners = listeners_;
    for (auto *l : listeners) l->job_deregistered(nspace);
    jobs_.erase(nspace);
}

void ClientTable::erase_client(const ProcKey &key) {
    if (JobRecord *j = find_job(key.first)) j->clients.erase(key.second);
}

}  // namespace pmixpp::server
