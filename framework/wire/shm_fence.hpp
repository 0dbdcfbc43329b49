// The shared-memory fence: a barrier in a POSIX shared-memory segment for
// the fences without data among all processes of a job that runs entirely on
// this node (server/README.md, "Fences in shared memory").
//
// The server creates one segment per such job at register_nspace and hands
// its name to the job's clients as the job-level key PMIXPP_FENCE_SHM_KEY. A
// client's blocking PMIx_Fence over its whole namespace without data arrives
// in the segment and sleeps on a futex until the last participant arrives:
// no message, no server turn, no progress-thread hand-off. Any other fence of
// the same job (PMIx_Fence_nb, a fence called on the progress thread, a
// client that could not map the segment) goes to the server as before, and
// the server arrives in the segment on that client's behalf ("proxied"), so
// both kinds of participant meet in the same barrier. A client whose arrival
// completes a generation that had proxied arrivals tells the server
// (Command::fence_shm_done) so that it answers their requests.
//
// Ordering with Commit: a Commit's frame travels to the server after the
// caller returns, so a peer's Get issued right after a shared-memory fence
// could reach the server first. Each client counts its commits in the
// segment before it arrives; the server answers a Get for a local peer only
// once it has received as many commits from that peer as the segment shows.
//
// Failure: the server marks the segment broken (sticky) when a participant
// is lost, deregistered or finalized, or the job is deregistered: waiters
// wake with that status, later fences fail at once (as a fence naming a gone
// process does over the socket). The server mends it when every participant
// is connected again (a finalized client that called PMIx_Init again). A
// waiter whose timeout expires withdraws its arrival and returns
// PMIX_ERR_TIMEOUT.
//
// Threads: every member function may be called from any thread of any
// process mapping the segment.
#pragma once

#include <pmix_common.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace pmixpp::wire {

inline constexpr const char *PMIXPP_FENCE_SHM_KEY = "pmixpp.fence.shm";

class ShmFence {
  public:
    // Whether servers of this process create segments (MCA parameter
    // wire_base_fence_shm, default on).
    static bool enabled();
    // Server side: create a segment for ranks 0..nprocs-1 (mode 0600).
    // nullptr with `error` set on failure. Removes first what remove_stale()
    // removes.
    static std::unique_ptr<ShmFence> create(std::uint32_t nprocs, std::string &error);
    // Unlinks the segments named /dev/shm/pmixpp.fence.<pid>.<n> that belong
    // to this user and whose creating server (pid) no longer exists: what a
    // server killed before its destructors ran left behind. Returns how many.
    // A pid is judged in this process's PID namespace (framework/server/README.md).
    static int remove_stale();
    // Client side: map the segment `name` made by create().
    static std::unique_ptr<ShmFence> open(const std::string &name, std::string &error);
    ~ShmFence();
    ShmFence(const ShmFence &) = delete;
    ShmFence &operator=(const ShmFence &) = delete;

    const std::string &name() const noexcept { return name_; }
    std::uint32_t nprocs() const noexcept;

    // The segment's owner (the server) gives it to `uid`/`gid` (fchown),
    // so that a job running as another user can map it.
    bool give_to(unsigned uid, unsigned gid, std::string &error);

    struct Arrival {
        std::uint32_t gen = 0;      // the generation joined
        bool completed = false;     // this arrival was the last one
        std::uint32_t proxied = 0;  // if completed: proxied arrivals in that generation
        bool stale = false;         // `expect` was not the current generation: not counted
    };
    // Arrive at the current generation. `proxied`: the server arriving for a
    // client that sent its fence over the socket. PMIX_SUCCESS, or the sticky
    // broken status (nothing counted). With `expect` (not null): arrive only
    // if the current generation is *expect (the one whose fence area the
    // caller wrote, ShmArea), else nothing is counted and out.stale is set.
    pmix_status_t arrive(bool proxied, Arrival &out, const std::uint32_t *expect = nullptr);
    // The generation an arrival now would join.
    std::uint32_t current_gen() const;
    // The generation that follows `gen` when `gen` completes.
    static std::uint32_t after(std::uint32_t gen);
    // Sleep until generation `gen` completes: PMIX_SUCCESS, the broken status,
    // PMIX_ERR_LOST_CONNECTION once `lost` is true, or PMIX_ERR_TIMEOUT after
    // `timeout_s` seconds (0: none); with either of the last two the arrival
    // is withdrawn (a departed arrival never completes a generation).
    // PMIX_ERR_LOST_CONNECTION too when `gen` was voided: broken, then
    // mended, before this waiter looked (it never completed).
    pmix_status_t wait(std::uint32_t gen, std::uint32_t timeout_s,
                       const std::atomic<bool> &lost) const;
    // Take back one arrival made in generation `gen` if it has not completed;
    // false when it completed meanwhile.
    bool withdraw(std::uint32_t gen, bool proxied) const;
    // Whether generation `gen` has completed.
    bool completed(std::uint32_t gen) const;

    // Break the barrier with `status` (sticky) and wake every waiter.
    void break_with(pmix_status_t status) const;
    pmix_status_t broken() const;
    // Server side, when every participant is connected again (a client that
    // finalized came back with PMIx_Init): clear the broken status and start
    // a new generation with no arrivals (those counted before the break are
    // void: their callers return the broken status, or
    // PMIX_ERR_LOST_CONNECTION if they wake only after this).
    void mend() const;
    // Wake every waiter so that it re-checks its own exit conditions.
    void wake_all() const;

    // Commits made by `rank` (counted by the client before its frame leaves).
    void count_commit(std::uint32_t rank) const;
    std::uint64_t commits(std::uint32_t rank) const;

  private:
    struct Layout;
    ShmFence(std::string name, void *base, std::size_t size, bool owner);
    Layout &layout() const;
    std::uint64_t &commit_slot(std::uint32_t rank) const;

    std::string name_;
    void *base_ = nullptr;
    std::size_t size_ = 0;
    bool owner_ = false;
};

// The job's fence data segment: one copy of what a collecting fence over
// the whole job gathered, which every local client reads in place instead of
// receiving its own copy through its socket (server/README.md, "Fence data
// in shared memory"). Created beside the job's ShmFence, named by the
// job-level key PMIXPP_FENCE_DATA_KEY, removed with it.
//
// The server writes a fence's record stream (wire::append_record) at the
// data offset and numbers it (seq); each client whose fence request said it
// maps the segment gets (seq, length) in its reply instead of the records,
// reads them, and marks seq consumed in its rank's slot. The server writes
// again only once every rank it gave data to has consumed it (idle()); until
// then (several PMIx_Fence_nb in flight) a fence's data goes through the
// sockets. The segment grows (ftruncate + fallocate, so that a full
// /dev/shm is an error here, never a SIGBUS in a reader) and clients map the
// new size when a reply names data beyond their mapping.
//
// Threads: the server's calls on its progress thread; a client's on its own.
inline constexpr const char *PMIXPP_FENCE_DATA_KEY = "pmixpp.fence.data";

// A POSIX shared-memory object mapped in this process that can grow: what
// ShmData and ShmArea share. The creator (`owner`) unlinks it when it goes.
class ShmObject {
  public:
    ShmObject(const ShmObject &) = delete;
    ShmObject &operator=(const ShmObject &) = delete;
    const std::string &name() const noexcept { return name_; }
    bool give_to(unsigned uid, unsigned gid, std::string &error);

  protected:
    ShmObject(std::string name, int fd, void *base, std::size_t size, bool owner);
    ~ShmObject();
    // Maps at least `size` bytes of the object (mremap); false with `error`.
    bool map_at_least(std::size_t size, std::string &error);
    // Grows the object from `have` bytes to hold `need` (at least doubling,
    // whole pages) and maps it. The pages are reserved now, so a full
    // /dev/shm fails here (the object keeps its size), never with a SIGBUS
    // in whoever touches a page first.
    bool grow(std::size_t have, std::size_t need, std::string &error);

    std::string name_;
    int fd_ = -1;
    void *base_ = nullptr;
    std::size_t size_ = 0;
    bool owner_ = false;
};

class ShmData : public ShmObject {
  public:
    // Whether collecting fences use data segments (MCA parameter
    // wire_base_fence_shm_data, default on): a server with it off creates
    // none; a client with it off never maps one (its data comes through its
    // socket).
    static bool enabled();
    static std::unique_ptr<ShmData> create(std::uint32_t nprocs, std::string &error);
    static std::unique_ptr<ShmData> open(const std::string &name, std::string &error);

    std::uint32_t nprocs() const noexcept;

    // Server: whether every rank has consumed the data it was given.
    bool idle() const;
    // Server: write `data` as the next fence's data; its seq in `seq`. False
    // (error set, nothing changed) when the segment cannot grow to hold it.
    bool write(std::span<const std::uint8_t> data, std::uint64_t &seq, std::string &error);
    // Server: `rank` was told to read data `seq`.
    void given(std::uint32_t rank, std::uint64_t seq) const;
    // Server: `rank` departed; what it was given counts as consumed.
    void release(std::uint32_t rank) const;
    // Bytes written by write() over the segment's life (tests, docs).
    std::uint64_t bytes_written() const noexcept { return bytes_written_; }

    // Client: the `length` bytes of fence data `seq` (mapping the segment's
    // new size if it grew); empty with `error` set when they are not there.
    std::span<const std::uint8_t> read(std::uint64_t seq, std::uint64_t length, std::string &error);
    // Client: `rank` has read data `seq`.
    void consumed(std::uint32_t rank, std::uint64_t seq) const;

  private:
    struct Layout;
    ShmData(std::string name, int fd, void *base, std::size_t size, bool owner);
    Layout &layout() const;
    std::uint64_t &slot(std::uint32_t rank, int which) const;

    std::uint64_t bytes_written_ = 0;
};

// A process's fence area: what it committed since it last published, for
// the collecting fences that go through the barrier (server/README.md,
// "Collecting fences through the barrier"). One POSIX shared-memory object
// per rank of a job that has a fence segment, named `<fence segment>.<rank>`
// (PMIXPP_FENCE_AREAS_KEY names the fence segment), created empty by the
// server at job registration, removed with the fence segment and by
// ShmFence::remove_stale.
//
// One writer at a time: the rank itself before it arrives in the barrier
// for generation g, or the server on its behalf (a proxied arrival). The
// writer fills the slot of its publication before the last two (three
// slots in turn: data, then the header, tag = g + 1), its bytes placed
// clear of those two slots' bytes; readers read it once g has completed.
// The bytes of generation g stay intact until every reader has arrived in
// g + 2: a writer publishes for g + 1 and g + 2 in the two other slots, and
// for g + 3 only once g + 2 completed. So a reader may keep where a peer's
// bytes are (Client::Held) and copy them only when a Get asks for that peer,
// or before it arrives in g + 2; or never, when the peer's next publication
// is its whole data (client/fence_shm.cpp). The writer grows the object
// (ftruncate + posix_fallocate: a full /dev/shm fails publish(), never a
// SIGBUS); readers remap when a header names bytes past their mapping.
inline constexpr const char *PMIXPP_FENCE_AREAS_KEY = "pmixpp.fence.areas";

class ShmArea : public ShmObject {
  public:
    enum Flags : std::uint32_t {
        kWhole = 1,   // the data is everything the process committed
        kAbsent = 2,  // the writer could not write its data here: ask the server
    };
    // Whether collecting fences go through the barrier and the areas: MCA
    // parameter wire_base_fence_areas (default on) and ShmData::enabled().
    // A server with it off creates none (collecting fences go through the
    // server, and the data segment, as before); a client with it off maps
    // none (the server writes its area and reads the others' for it).
    static bool enabled();
    // Server: create the object `name` (mode 0600), empty.
    static std::unique_ptr<ShmArea> create(const std::string &name, std::string &error);
    static std::unique_ptr<ShmArea> open(const std::string &name, std::string &error);
    static std::string name_for(const std::string &fence_name, std::uint32_t rank);
    // Writer, for generation `gen`: the commits (from, to] of the process.
    // False with `error` set when the object cannot grow to hold `data`:
    // the slot is then published kAbsent (readers ask the server).
    bool publish(std::uint32_t gen, std::uint64_t from, std::uint64_t to, std::uint32_t flags,
                 std::span<const std::uint8_t> data, std::string &error);
    struct View {
        bool published = false;  // the writer published for this generation
        std::uint64_t from = 0, to = 0;
        std::uint32_t flags = 0;
        // Valid until the reader remaps (its next read()). Where they are,
        // for copy(): until the reader arrives in gen + 2.
        std::span<const std::uint8_t> data;
        struct Where {
            int slot = -1;
            std::uint64_t seq = 0;  // the slot's publication
            std::uint64_t offset = 0, length = 0;
        } where;
    };
    // Server: it waits for this rank's commits (a Get, a direct modex): from
    // now on the rank sends each commit at once instead of holding back its
    // `whole` ones (client/README.md, "Commits held back"). Sticky.
    void want_commits();
    bool commits_wanted() const;
    // Reader, once generation `gen` completed.
    bool read(std::uint32_t gen, View &out, std::string &error);
    // Reader: appends to `out` the bytes of a View read before, if that
    // publication is still in its slot when the copy is done (else false
    // and `out` as it was: the writer replaced them, which it does only
    // after the reader arrived in gen + 2, or after a generation that never
    // completed: a timeout, a mend).
    bool copy(const View::Where &where, std::vector<std::uint8_t> &out) const;

  private:
    struct Layout;
    ShmArea(std::string name, int fd, void *base, std::size_t size, bool owner);
    Layout &layout() const;
    bool grow_to(std::size_t size, std::string &error);
};

}  // namespace pmixpp::wire
