#include "wire/shm_fence.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstring>
#include <ctime>
#include <algorithm>
#include <string_view>

#include "pmixpp/mca/parameters.hpp"

namespace pmixpp::wire {

namespace {

constexpr std::uint32_t kMagic = 0x50584642;  // "PXFB"
constexpr std::uint32_t kMaxProcs = 0xffff;   // arrivals are counted in 16 bits

// state: generation (32 bits) | proxied arrivals (16) | arrivals (16). The
// generation word is mends (8 bits) | completions (24): the last arrival
// advances the completions, mend() the mends, so that a waiter whose
// generation was voided by a break and a mend while it slept (stopped,
// descheduled) tells that from a completion (ShmFence::wait).
constexpr std::uint32_t gen_of(std::uint64_t s) {
    return static_cast<std::uint32_t>(s >> 32);
}
constexpr std::uint32_t kCompletionMask = 0xffffff;
// The generation after `gen` completed.
constexpr std::uint32_t next_completed(std::uint32_t gen) {
    return (gen & ~kCompletionMask) | ((gen + 1) & kCompletionMask);
}
// The generation after `gen` was voided by a mend.
constexpr std::uint32_t next_mended(std::uint32_t gen) {
    return (gen & kCompletionMask) | ((gen & ~kCompletionMask) + (kCompletionMask + 1));
}
constexpr std::uint32_t proxied_of(std::uint64_t s) {
    return static_cast<std::uint32_t>((s >> 16) & 0xffff);
}
constexpr std::uint32_t arrived_of(std::uint64_t s) {
    return static_cast<std::uint32_t>(s & 0xffff);
}
constexpr std::uint64_t make_state(std::uint32_t gen, std::uint32_t proxied,
                                   std::uint32_t arrived) {
    return (static_cast<std::uint64_t>(gen) << 32) | (static_cast<std::uint64_t>(proxied) << 16) |
           arrived;
}

std::string errno_text(const char *what) {
    return std::string(what) + ": " + std::strerror(errno);
}

// "/pmixpp.fence.<pid>.<n>": what remove_stale() recognises (fence and data
// segments alike).
std::string next_segment_name() {
    static std::atomic<unsigned> counter{0};
    return "/pmixpp.fence." + std::to_string(::getpid()) + "." +
           std::to_string(counter.fetch_add(1));
}

// A new segment `name` (mode 0600) of `size` zero bytes, mapped: its open
// descriptor, `base` set; -1 with `error` set and nothing left behind.
int create_mapped(const std::string &name, std::size_t size, void *&base, std::string &error) {
    const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
        error = errno_text(("shm_open " + name).c_str());
        return -1;
    }
    base = MAP_FAILED;
    if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
        error = errno_text("ftruncate");
    } else {
        base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (base == MAP_FAILED) error = errno_text("mmap");
    }
    if (base != MAP_FAILED) return fd;
    ::close(fd);
    ::shm_unlink(name.c_str());
    return -1;
}

// An existing segment `name` of at least `min_size` bytes, mapped whole: its
// open descriptor, `base` and `size` set; -1 with `error` set.
int open_mapped(const std::string &name, std::size_t min_size, void *&base, std::size_t &size,
                std::string &error) {
    const int fd = ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) {
        error = errno_text(("shm_open " + name).c_str());
        return -1;
    }
    struct stat st {};
    base = MAP_FAILED;
    if (::fstat(fd, &st) != 0) {
        error = errno_text("fstat");
    } else if (static_cast<std::size_t>(st.st_size) < min_size) {
        error = "segment " + name + " is too small";
    } else {
        size = static_cast<std::size_t>(st.st_size);
        base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (base == MAP_FAILED) error = errno_text("mmap");
    }
    if (base != MAP_FAILED) return fd;
    ::close(fd);
    return -1;
}

}  // namespace

struct ShmFence::Layout {
    std::uint32_t magic;
    std::uint32_t nprocs;
    alignas(8) std::uint64_t state;
    alignas(4) std::uint32_t seq;  // futex word
    std::int32_t broken;           // PMIX_SUCCESS or the sticky failure
    alignas(8) std::uint64_t commits[1];

    static std::size_t size_for(std::uint32_t nprocs) {
        return offsetof(Layout, commits) + sizeof(std::uint64_t) * (nprocs == 0 ? 1 : nprocs);
    }
};

template <typename T>
static std::atomic_ref<T> at(T &field) {
    static_assert(std::atomic_ref<T>::is_always_lock_free);
    return std::atomic_ref<T>(field);
}

// A boolean wire_base_* parameter with default 1, registered at first use:
// true unless it is set to 0.
static bool on_unless_zero(const char *name, const char *description) {
    mca::ParamSpec spec;
    spec.name = name;
    spec.framework = "wire";
    spec.component = "base";
    spec.type = mca::ParamType::boolean;
    spec.description = description;
    spec.default_value = "1";
    auto result = mca::ParameterRegistry::process_wide().register_param(spec);
    return !result || result.value().int_value != 0;
}

bool ShmFence::enabled() {
    static const bool on = on_unless_zero(
        "wire_base_fence_shm",
        "Fences without data among the processes of a job that runs entirely on this node "
        "meet in a shared-memory barrier (server side; 0: every fence goes through the "
        "server's socket)");
    return on;
}

ShmFence::ShmFence(std::string name, void *base, std::size_t size, bool owner)
    : name_(std::move(name)), base_(base), size_(size), owner_(owner) {}

ShmFence::~ShmFence() {
    if (base_ != nullptr) ::munmap(base_, size_);
    if (owner_) ::shm_unlink(name_.c_str());
}

ShmFence::Layout &ShmFence::layout() const {
    return *static_cast<Layout *>(base_);
}

std::uint32_t ShmFence::nprocs() const noexcept {
    return static_cast<const Layout *>(base_)->nprocs;
}

int ShmFence::remove_stale() {
    constexpr std::string_view kPrefix = "pmixpp.fence.";
    DIR *dir = ::opendir("/dev/shm");
    if (dir == nullptr) return 0;
    int removed = 0;
    const uid_t me = ::geteuid();
    while (const dirent *e = ::readdir(dir)) {
        const std::string_view name(e->d_name);
        if (!name.starts_with(kPrefix)) continue;
        // <pid>.<n>, both decimal, nothing else
        const std::string_view rest = name.substr(kPrefix.size());
        long pid = 0;
        unsigned long n = 0;
        auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
        if (ec != std::errc() || pid <= 0 || p == rest.data() + rest.size() || *p != '.') continue;
        const char *end = rest.data() + rest.size();
        auto [q, ec2] = std::from_chars(p + 1, end, n);
        if (ec2 != std::errc() || q == p + 1) continue;
        if (q != end) {
            // <pid>.<n>.<rank>: a fence area (ShmArea)
            unsigned long rank = 0;
            auto [t, ec3] = std::from_chars(q + 1, end, rank);
            if (*q != '.' || ec3 != std::errc() || t != end || t == q + 1) continue;
        }
        if (pid == ::getpid() || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH)
            continue;
        struct stat st {};
        const std::string path = "/" + std::string(name);
        if (::fstatat(::dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_uid != me)
            continue;
        if (::shm_unlink(path.c_str()) == 0) ++removed;
    }
    ::closedir(dir);
    return removed;
}

std::unique_ptr<ShmFence> ShmFence::create(std::uint32_t nprocs, std::string &error) {
    if (nprocs == 0 || nprocs > kMaxProcs) {
        error = "unsupported number of processes " + std::to_string(nprocs);
        return nullptr;
    }
    remove_stale();
    const std::string name = next_segment_name();
    const std::size_t size = Layout::size_for(nprocs);
    void *base = nullptr;
    const int fd = create_mapped(name, size, base, error);
    if (fd < 0) return nullptr;
    ::close(fd);
    auto *l = static_cast<Layout *>(base);  // zero-filled by ftruncate
    l->nprocs = nprocs;
    l->broken = PMIX_SUCCESS;
    at(l->magic).store(kMagic, std::memory_order_release);
    return std::unique_ptr<ShmFence>(new ShmFence(name, base, size, true));
}

std::unique_ptr<ShmFence> ShmFence::open(const std::string &name, std::string &error) {
    void *base = nullptr;
    std::size_t size = 0;
    const int fd = open_mapped(name, Layout::size_for(1), base, size, error);
    if (fd < 0) return nullptr;
    ::close(fd);
    auto *l = static_cast<Layout *>(base);
    if (at(l->magic).load(std::memory_order_acquire) != kMagic || l->nprocs == 0 ||
        l->nprocs > kMaxProcs || Layout::size_for(l->nprocs) > size) {
        error = "segment " + name + " is not a pmixpp fence segment";
        ::munmap(base, size);
        return nullptr;
    }
    return std::unique_ptr<ShmFence>(new ShmFence(name, base, size, false));
}

bool ShmFence::give_to(unsigned uid, unsigned gid, std::string &error) {
    const int fd = ::shm_open(name_.c_str(), O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) {
        error = errno_text("shm_open");
        return false;
    }
    const bool ok = ::fchown(fd, uid, gid) == 0;
    if (!ok) error = errno_text("fchown");
    ::close(fd);
    return ok;
}

std::uint32_t ShmFence::after(std::uint32_t gen) {
    return next_completed(gen);
}

std::uint32_t ShmFence::current_gen() const {
    return gen_of(at(layout().state).load());
}

pmix_status_t ShmFence::arrive(bool proxied, Arrival &out, const std::uint32_t *expect) {
    Layout &l = layout();
    auto state = at(l.state);
    std::uint64_t s = state.load();
    for (;;) {
        if (const pmix_status_t b = broken(); b != PMIX_SUCCESS) return b;
        const std::uint32_t gen = gen_of(s);
        if (expect != nullptr && *expect != gen) {
            out = Arrival{gen, false, 0, true};
            return PMIX_SUCCESS;
        }
        const std::uint32_t p = proxied_of(s) + (proxied ? 1 : 0);
        const std::uint32_t a = arrived_of(s) + 1;
        const bool last = a >= l.nprocs;
        const std::uint64_t next =
            last ? make_state(next_completed(gen), 0, 0) : make_state(gen, p, a);
        if (state.compare_exchange_weak(s, next)) {
            out = Arrival{gen, last, last ? p : 0};
            if (last) wake_all();
            return PMIX_SUCCESS;
        }
    }
}

bool ShmFence::completed(std::uint32_t gen) const {
    return gen_of(at(layout().state).load()) != gen;
}

pmix_status_t ShmFence::wait(std::uint32_t gen, std::uint32_t timeout_s,
                             const std::atomic<bool> &lost) const {
    Layout &l = layout();
    using clock = std::chrono::steady_clock;
    const auto deadline = clock::now() + std::chrono::seconds(timeout_s);
    for (;;) {
        // Read the futex word first: any change after this makes FUTEX_WAIT
        // return at once, so no wake-up between the checks and the sleep is lost.
        const std::uint32_t seq = at(l.seq).load();
        if (completed(gen)) {
            // Only the last arrival advances the completions: an unchanged
            // count means a mend voided the generation (a participant
            // finalized or was lost, then every one was back) while this
            // waiter slept past the break's wake-up. Its peers never all
            // arrived: fail as the break did, never pass with their data
            // missing or older.
            const std::uint32_t now = gen_of(at(l.state).load());
            return ((now ^ gen) & kCompletionMask) != 0 ? PMIX_SUCCESS : PMIX_ERR_LOST_CONNECTION;
        }
        if (const pmix_status_t b = broken(); b != PMIX_SUCCESS) return b;
        // The caller's server is gone: take the arrival back, so that a
        // later participant cannot complete the barrier with it and succeed
        // where this one failed (unless it completed meanwhile: then it did).
        if (lost.load()) return withdraw(gen, false) ? PMIX_ERR_LOST_CONNECTION : PMIX_SUCCESS;
        timespec ts{};
        timespec *tsp = nullptr;
        if (timeout_s > 0) {
            const auto left = deadline - clock::now();
            if (left <= clock::duration::zero()) {
                return withdraw(gen, false) ? PMIX_ERR_TIMEOUT : PMIX_SUCCESS;
            }
            const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
            ts.tv_sec = static_cast<time_t>(ns / 1000000000);
            ts.tv_nsec = static_cast<long>(ns % 1000000000);
            tsp = &ts;
        }
        ::syscall(SYS_futex, &l.seq, FUTEX_WAIT, seq, tsp, nullptr, 0);
    }
}

bool ShmFence::withdraw(std::uint32_t gen, bool proxied) const {
    auto state = at(layout().state);
    std::uint64_t s = state.load();
    for (;;) {
        if (gen_of(s) != gen || arrived_of(s) == 0) return false;
        if (proxied && proxied_of(s) == 0) return false;
        const std::uint64_t next =
            make_state(gen, proxied_of(s) - (proxied ? 1 : 0), arrived_of(s) - 1);
        if (state.compare_exchange_weak(s, next)) return true;
    }
}

void ShmFence::break_with(pmix_status_t status) const {
    if (status == PMIX_SUCCESS) return;
    std::int32_t expected = PMIX_SUCCESS;
    at(layout().broken).compare_exchange_strong(expected, status);
    wake_all();
}

pmix_status_t ShmFence::broken() const {
    return at(layout().broken).load();
}

void ShmFence::mend() const {
    Layout &l = layout();
    auto state = at(l.state);
    std::uint64_t s = state.load();
    while (!state.compare_exchange_weak(s, make_state(next_mended(gen_of(s)), 0, 0))) {
    }
    // Cleared last: until then every arrival fails at once and counts nothing.
    at(l.broken).store(PMIX_SUCCESS);
    wake_all();
}

void ShmFence::wake_all() const {
    Layout &l = layout();
    at(l.seq).fetch_add(1);
    ::syscall(SYS_futex, &l.seq, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

std::uint64_t &ShmFence::commit_slot(std::uint32_t rank) const {
    // The slots run past the declared one-element array: address them from the base.
    auto *first =
        reinterpret_cast<std::uint64_t *>(static_cast<char *>(base_) + offsetof(Layout, commits));
    return first[rank];
}

void ShmFence::count_commit(std::uint32_t rank) const {
    if (rank < nprocs()) at(commit_slot(rank)).fetch_add(1);
}

std::uint64_t ShmFence::commits(std::uint32_t rank) const {
    return rank < nprocs() ? at(commit_slot(rank)).load() : 0;
}

// ---------------------------------------------------------------------------------------------
// ShmData

namespace {

constexpr std::uint32_t kDataMagic = 0x50584644;  // "PXFD"
enum : int { kGiven = 0, kConsumed = 1 };

std::size_t page_round(std::size_t n) {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return (n + page - 1) / page * page;
}

}  // namespace

struct ShmData::Layout {
    std::uint32_t magic;
    std::uint32_t nprocs;
    alignas(8) std::uint64_t seq;       // the data written last (0: none)
    std::uint64_t length;               // its bytes
    alignas(8) std::uint64_t slots[2];  // per rank: given, consumed

    static std::size_t data_offset(std::uint32_t nprocs) {
        const std::size_t end = offsetof(Layout, slots) + 2 * sizeof(std::uint64_t) * nprocs;
        return (end + 63) / 64 * 64;
    }
};

bool ShmData::enabled() {
    static const bool on = on_unless_zero(
        "wire_base_fence_shm_data",
        "The data of a collecting fence over a whole job that runs on this node is written "
        "once into a shared-memory segment that every client reads in place (server: offer "
        "the segment; client: map it). 0: each client receives its own copy through its "
        "socket");
    return on;
}

ShmObject::ShmObject(std::string name, int fd, void *base, std::size_t size, bool owner)
    : name_(std::move(name)), fd_(fd), base_(base), size_(size), owner_(owner) {}

ShmObject::~ShmObject() {
    if (base_ != nullptr) ::munmap(base_, size_);
    if (fd_ >= 0) ::close(fd_);
    if (owner_) ::shm_unlink(name_.c_str());
}

bool ShmObject::give_to(unsigned uid, unsigned gid, std::string &error) {
    if (::fchown(fd_, uid, gid) == 0) return true;
    error = errno_text("fchown");
    return false;
}

bool ShmObject::map_at_least(std::size_t size, std::string &error) {
    if (size <= size_) return true;
    void *base = ::mremap(base_, size_, size, MREMAP_MAYMOVE);
    if (base == MAP_FAILED) {
        error = errno_text("mremap");
        return false;
    }
    base_ = base;
    size_ = size;
    return true;
}

bool ShmObject::grow(std::size_t have, std::size_t need, std::string &error) {
    const std::size_t grown = page_round(std::max(need, 2 * have));
    if (::ftruncate(fd_, static_cast<off_t>(grown)) != 0) {
        error = errno_text("ftruncate");
        return false;
    }
    if (const int rc =
            ::posix_fallocate(fd_, static_cast<off_t>(have), static_cast<off_t>(grown - have));
        rc != 0) {
        error = std::string("posix_fallocate: ") + std::strerror(rc);
        (void)::ftruncate(fd_, static_cast<off_t>(have));
        return false;
    }
    return map_at_least(grown, error);
}

ShmData::ShmData(std::string name, int fd, void *base, std::size_t size, bool owner)
    : ShmObject(std::move(name), fd, base, size, owner) {}

ShmData::Layout &ShmData::layout() const {
    return *static_cast<Layout *>(base_);
}

std::uint32_t ShmData::nprocs() const noexcept {
    return static_cast<const Layout *>(base_)->nprocs;
}

std::uint64_t &ShmData::slot(std::uint32_t rank, int which) const {
    auto *first =
        reinterpret_cast<std::uint64_t *>(static_cast<char *>(base_) + offsetof(Layout, slots));
    return first[2 * static_cast<std::size_t>(rank) + static_cast<std::size_t>(which)];
}

std::unique_ptr<ShmData> ShmData::create(std::uint32_t nprocs, std::string &error) {
    if (nprocs == 0 || nprocs > kMaxProcs) {
        error = "unsupported number of processes " + std::to_string(nprocs);
        return nullptr;
    }
    const std::string name = next_segment_name();
    const std::size_t size = page_round(Layout::data_offset(nprocs));
    void *base = nullptr;
    const int fd = create_mapped(name, size, base, error);  // kept: the segment grows
    if (fd < 0) return nullptr;
    auto *l = static_cast<Layout *>(base);  // zero-filled by ftruncate
    l->nprocs = nprocs;
    at(l->magic).store(kDataMagic, std::memory_order_release);
    return std::unique_ptr<ShmData>(new ShmData(name, fd, base, size, true));
}

std::unique_ptr<ShmData> ShmData::open(const std::string &name, std::string &error) {
    void *base = nullptr;
    std::size_t size = 0;
    const int fd = open_mapped(name, Layout::data_offset(1), base, size, error);
    if (fd < 0) return nullptr;
    auto *l = static_cast<Layout *>(base);
    if (at(l->magic).load(std::memory_order_acquire) != kDataMagic || l->nprocs == 0 ||
        l->nprocs > kMaxProcs || Layout::data_offset(l->nprocs) > size) {
        error = "segment " + name + " is not a pmixpp fence data segment";
        ::munmap(base, size);
        ::close(fd);
        return nullptr;
    }
    return std::unique_ptr<ShmData>(new ShmData(name, fd, base, size, false));
}

bool ShmData::idle() const {
    for (std::uint32_t r = 0; r < nprocs(); ++r) {
        if (at(slot(r, kConsumed)).load() < at(slot(r, kGiven)).load()) return false;
    }
    return true;
}

bool ShmData::write(std::span<const std::uint8_t> data, std::uint64_t &seq, std::string &error) {
    const std::size_t offset = Layout::data_offset(nprocs());
    const std::size_t need = offset + data.size();
    if (need > size_ && !grow(size_, need, error)) return false;
    if (!data.empty()) std::memcpy(static_cast<char *>(base_) + offset, data.data(), data.size());
    Layout &l = layout();
    at(l.length).store(data.size());
    seq = at(l.seq).load() + 1;
    at(l.seq).store(seq, std::memory_order_release);
    bytes_written_ += data.size();
    return true;
}

void ShmData::given(std::uint32_t rank, std::uint64_t seq) const {
    if (rank < nprocs()) at(slot(rank, kGiven)).store(seq);
}

void ShmData::release(std::uint32_t rank) const {
    if (rank < nprocs()) at(slot(rank, kConsumed)).store(at(slot(rank, kGiven)).load());
}

std::span<const std::uint8_t> ShmData::read(std::uint64_t seq, std::uint64_t length,
                                            std::string &error) {
    const std::size_t offset = Layout::data_offset(nprocs());
    if (at(layout().seq).load(std::memory_order_acquire) != seq ||
        at(layout().length).load() != length) {
        error = "fence data " + std::to_string(seq) + " is not in the segment";
        return {};
    }
    const std::size_t need = offset + length;
    if (need > size_) {
        struct stat st {};
        if (::fstat(fd_, &st) != 0) {
            error = errno_text("fstat");
            return {};
        }
        if (static_cast<std::size_t>(st.st_size) < need) {
            error = "fence data " + std::to_string(seq) + " runs past the segment";
            return {};
        }
        if (!map_at_least(static_cast<std::size_t>(st.st_size), error)) return {};
    }
    return {static_cast<const std::uint8_t *>(base_) + offset, static_cast<std::size_t>(length)};
}

void ShmData::consumed(std::uint32_t rank, std::uint64_t seq) const {
    if (rank < nprocs()) at(slot(rank, kConsumed)).store(seq);
}

// ---------------------------------------------------------------------------------------------
// ShmArea

namespace {
// "PXF3": three slots (an area of two, "PXFA", is refused: its client
// reads through the server).
constexpr std::uint32_t kAreaMagic = 0x33465850;
constexpr int kAreaSlots = 3;
}  // namespace

struct ShmArea::Layout {
    struct Slot {
        std::uint64_t tag;  // gen + 1 of the generation published (0: none)
        std::uint64_t from, to;
        std::uint64_t offset, length;
        std::uint64_t flags;
        std::uint64_t seq;  // publications before this one + 1 (0: being replaced)
    };
    std::uint32_t magic;
    std::uint32_t wanted;     // 1: the server waits for this rank's commits (want_commits)
    std::uint64_t published;  // publications so far: the next goes in slot published % 3
    Slot slots[kAreaSlots];

    static constexpr std::size_t data_offset() { return (sizeof(Layout) + 63) / 64 * 64; }
};

bool ShmArea::enabled() {
    static const bool on =
        on_unless_zero("wire_base_fence_areas",
                       "Collecting fences over a whole job that runs on this node go through the "
                       "shared-memory barrier: each process writes its commits into its own fence "
                       "area and reads the others' (server: create the areas; client: map them). "
                       "0: their data goes through the server") &&
        ShmData::enabled();
    return on;
}

ShmArea::ShmArea(std::string name, int fd, void *base, std::size_t size, bool owner)
    : ShmObject(std::move(name), fd, base, size, owner) {}

ShmArea::Layout &ShmArea::layout() const {
    return *static_cast<Layout *>(base_);
}

std::string ShmArea::name_for(const std::string &fence_name, std::uint32_t rank) {
    return fence_name + "." + std::to_string(rank);
}

std::unique_ptr<ShmArea> ShmArea::create(const std::string &name, std::string &error) {
    void *base = nullptr;
    const int fd = create_mapped(name, page_round(Layout::data_offset()), base, error);
    if (fd < 0) return nullptr;
    at(static_cast<Layout *>(base)->magic).store(kAreaMagic, std::memory_order_release);
    return std::unique_ptr<ShmArea>(
        new ShmArea(name, fd, base, page_round(Layout::data_offset()), true));
}

std::unique_ptr<ShmArea> ShmArea::open(const std::string &name, std::string &error) {
    void *base = nullptr;
    std::size_t size = 0;
    const int fd = open_mapped(name, Layout::data_offset(), base, size, error);
    if (fd < 0) return nullptr;
    if (at(static_cast<Layout *>(base)->magic).load(std::memory_order_acquire) != kAreaMagic) {
        error = "segment " + name + " is not a pmixpp fence area";
        ::munmap(base, size);
        ::close(fd);
        return nullptr;
    }
    return std::unique_ptr<ShmArea>(new ShmArea(name, fd, base, size, false));
}

bool ShmArea::grow_to(std::size_t need, std::string &error) {
    // Mapped already: the file is at least as long as the mapping.
    if (need <= size_) return true;
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
        error = errno_text("fstat");
        return false;
    }
    const auto have = static_cast<std::size_t>(st.st_size);
    if (have < need) return grow(have, need, error);
    return map_at_least(have, error);
}

bool ShmArea::publish(std::uint32_t gen, std::uint64_t from, std::uint64_t to, std::uint32_t flags,
                      std::span<const std::uint8_t> data, std::string &error) {
    Layout &l = layout();
    const auto n = at(l.published).load();
    const int mine = static_cast<int>(n % kAreaSlots);
    // The slot's old publication goes first: a reader copying it sees its
    // seq change (copy()) before any of its bytes are written over.
    at(l.slots[mine].tag).store(0);
    at(l.slots[mine].seq).store(0);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    // The other two slots' bytes may still be read (header comment): the
    // first offset clear of both (each move passes a slot's end; two at most).
    std::uint64_t offset = Layout::data_offset();
    for (bool moved = !data.empty(); moved;) {
        moved = false;
        for (int k = 0; k < kAreaSlots; ++k) {
            Layout::Slot &o = l.slots[k];
            if (k == mine || at(o.tag).load() == 0 || o.length == 0) continue;
            if (offset < o.offset + o.length && o.offset < offset + data.size()) {
                offset = (o.offset + o.length + 63) / 64 * 64;
                moved = true;
            }
        }
    }
    bool ok = data.empty() || grow_to(offset + data.size(), error);
    if (ok && !data.empty())
        std::memcpy(static_cast<char *>(base_) + offset, data.data(), data.size());
    Layout &m = layout();  // base_ may have moved
    Layout::Slot &s = m.slots[mine];
    s.from = from;
    s.to = to;
    s.offset = ok ? offset : 0;
    s.length = ok ? data.size() : 0;
    s.flags = ok ? flags : kAbsent;
    at(s.seq).store(n + 1, std::memory_order_release);
    at(s.tag).store(static_cast<std::uint64_t>(gen) + 1, std::memory_order_release);
    at(m.published).store(n + 1, std::memory_order_release);
    return ok;
}

void ShmArea::want_commits() {
    at(layout().wanted).store(1);
}

bool ShmArea::commits_wanted() const {
    return at(layout().wanted).load() != 0;
}

bool ShmArea::read(std::uint32_t gen, View &out, std::string &error) {
    out = View{};
    const Layout::Slot *s = nullptr;
    int which = -1;
    for (int k = 0; k < kAreaSlots; ++k) {
        const auto &slot = layout().slots[k];
        if (at(const_cast<std::uint64_t &>(slot.tag)).load(std::memory_order_acquire) ==
            static_cast<std::uint64_t>(gen) + 1) {
            s = &slot;
            which = k;
        }
    }
    if (s == nullptr) return true;  // it did not publish in this generation
    out.published = true;
    out.from = s->from;
    out.to = s->to;
    out.flags = static_cast<std::uint32_t>(s->flags);
    const std::uint64_t offset = s->offset, length = s->length;
    const std::uint64_t seq = at(const_cast<std::uint64_t &>(s->seq)).load();
    s = nullptr;  // a remap below moves the header
    if (length == 0) return true;
    if (length > size_ || offset > size_ - length) {
        struct stat st {};
        if (::fstat(fd_, &st) != 0) {
            error = errno_text("fstat");
            return false;
        }
        const auto have = static_cast<std::uint64_t>(st.st_size);
        if (length > have || offset > have - length) {  // no sum that could wrap
            error = "fence area " + name_ + " is shorter than its header says";
            return false;
        }
        if (!map_at_least(static_cast<std::size_t>(st.st_size), error)) return false;
    }
    out.where = {which, seq, offset, length};
    out.data = {static_cast<const std::uint8_t *>(base_) + offset,
                static_cast<std::size_t>(length)};
    return true;
}

bool ShmArea::copy(const View::Where &where, std::vector<std::uint8_t> &out) const {
    if (where.slot < 0 || where.slot >= kAreaSlots || where.length > size_ ||
        where.offset > size_ - where.length) {
        return false;
    }
    auto seq = at(layout().slots[where.slot].seq);
    if (seq.load(std::memory_order_acquire) != where.seq) return false;
    const auto *b = static_cast<const std::uint8_t *>(base_) + where.offset;
    const std::size_t was = out.size();
    out.insert(out.end(), b, b + where.length);
    // A seqlock's read side: the bytes were those of that publication only
    // if its slot still names it after the copy.
    std::atomic_thread_fence(std::memory_order_acquire);
    if (seq.load(std::memory_order_relaxed) == where.seq) return true;
    out.resize(was);
    return false;
}

}  // namespace pmixpp::wire
