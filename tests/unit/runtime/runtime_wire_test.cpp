// Unit tests of the progress engine, framing, message bodies, modex record
// streams and the node/proc map format.
#include <algorithm>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <thread>

#include <cerrno>
#include <dirent.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runtime/progress.hpp"
#include "runtime/rwlock.hpp"
#include "wire/regex.hpp"
#include "pmixpp/mca/node_maps.hpp"
#include "wire/frame.hpp"
#include "wire/message.hpp"

using namespace pmixpp;
using runtime::Completion;
using runtime::ProgressEngine;

TEST(ProgressEngine, PostedTasksRunInOrderOnTheProgressThread) {
    auto &e = ProgressEngine::instance();
    ASSERT_TRUE(e.acquire().ok());
    std::vector<int> order;
    Completion<bool> done;
    std::atomic<bool> on_thread{true};
    for (int i = 0; i < 100; ++i) {
        e.post([&, i] {
            if (!e.on_thread()) on_thread = false;
            order.push_back(i);
            if (i == 99) done.complete(true);
        });
    }
    ASSERT_TRUE(done.wait(std::chrono::seconds(10)));
    EXPECT_TRUE(on_thread);
    for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
    e.release();
}

TEST(ProgressEngine, BlockingWaitOnTheProgressThreadPumpsInsteadOfDeadlocking) {
    auto &e = ProgressEngine::instance();
    ASSERT_TRUE(e.acquire().ok());
    bool inner = false;
    e.run_sync([&] {
        Completion<int> c;
        e.post([&] { c.complete(42); });  // can only run if wait() pumps
        inner = c.wait(std::chrono::seconds(10)) && c.value() == 42;
    });
    EXPECT_TRUE(inner);
    e.release();
}

// A closure that waits on the progress thread (a blocking call from a
// handler) pumps the loop, and that pump runs the closures queued before it
// was called too, in order: here the closure it waits for was posted right
// after it, both while the thread was busy, so they were queued together.
// Before, the queue was taken in batches and the rest of the waiter's batch
// ran only after the waiter returned: the wait ran out its time.
TEST(ProgressEngine, AWaitOnTheProgressThreadRunsTheClosuresQueuedWithIt) {
    auto &e = ProgressEngine::instance();
    ASSERT_TRUE(e.acquire().ok());
    Completion<bool> busy, waited;
    Completion<int> answer;
    std::promise<void> open;
    std::shared_future<void> opened = open.get_future().share();
    ASSERT_TRUE(e.post([&busy, opened] {
        busy.complete(true);
        opened.wait_for(std::chrono::seconds(20));  // holds the thread without pumping
    }));
    ASSERT_TRUE(busy.wait(std::chrono::seconds(20)));
    ASSERT_TRUE(e.post(
        [&] { waited.complete(answer.wait(std::chrono::seconds(3)) && answer.value() == 7); }));
    ASSERT_TRUE(e.post([&] { answer.complete(7); }));
    open.set_value();
    ASSERT_TRUE(waited.wait(std::chrono::seconds(20)));
    EXPECT_TRUE(waited.value());
    e.release();
}

TEST(ProgressEngine, CancelledTimerNeverFiresAndOthersDo) {
    auto &e = ProgressEngine::instance();
    ASSERT_TRUE(e.acquire().ok());
    std::atomic<int> fired{0};
    Completion<bool> done;
    e.run_sync([&] {
        auto id = e.after(std::chrono::milliseconds(1), [&] { fired += 100; });
        e.cancel(id);
        e.after(std::chrono::milliseconds(5), [&] {
            fired += 1;
            done.complete(true);
        });
    });
    ASSERT_TRUE(done.wait(std::chrono::seconds(10)));
    EXPECT_EQ(fired.load(), 1);
    e.release();
}

TEST(ProgressEngine, RestartsAfterTheLastRelease) {
    auto &e = ProgressEngine::instance();
    for (int round = 0; round < 3; ++round) {
        ASSERT_TRUE(e.acquire().ok());
        bool ran = false;
        e.run_sync([&] { ran = e.on_thread(); });
        EXPECT_TRUE(ran);
        e.release();
    }
    EXPECT_FALSE(e.post([] {}));
}

namespace {
int threads_alive() {
    DIR *d = opendir("/proc/self/task");
    if (d == nullptr) return -1;
    int n = 0;
    for (dirent *e; (e = readdir(d)) != nullptr;) {
        if (e->d_name[0] != '.') ++n;
    }
    closedir(d);
    return n;
}
// A joined thread's /proc/self/task entry can outlive the join by a moment
// (the kernel reaps it after it cleared its tid): the count, once it is
// `want` or after a bounded wait (under load, a run of the full suite saw it
// one too many once).
int threads_alive_settled(int want) {
    int n = threads_alive();
    for (int i = 0; i < 500 && n != want; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        n = threads_alive();
    }
    return n;
}
}  // namespace

// PMIx_Finalize's stop (retire / end_loop / await_end): the last user hands
// the end of the loop to a closure on the progress thread. The closures
// queued before the end still run, the thread then frees the loop and exits
// by itself (gone from /proc/self/task before release() is called: nothing
// woke it to stop), a closure posted after that is refused, and the engine
// starts again after release().
TEST(ProgressEngine, TheLastUserEndsTheLoopFromTheProgressThread) {
    auto &e = ProgressEngine::instance();
    const int before = threads_alive();
    ASSERT_TRUE(e.acquire().ok());
    ASSERT_TRUE(e.retire());
    EXPECT_FALSE(e.retire());  // one retiring release at a time
    std::atomic<bool> queued_ran{false};
    // The second closure is queued before the first calls end_loop(): the
    // first waits for it (else the thread may end before the second post).
    std::atomic<bool> second_queued{false};
    ASSERT_TRUE(e.post([&e, &second_queued] {
        while (!second_queued.load()) std::this_thread::yield();
        e.end_loop();
    }));
    const bool posted = e.post([&queued_ran] { queued_ran = true; });
    second_queued = true;
    ASSERT_TRUE(posted);
    ASSERT_TRUE(e.await_end(std::chrono::seconds(20)));
    EXPECT_TRUE(queued_ran.load());
    EXPECT_EQ(threads_alive_settled(before), before);
    EXPECT_FALSE(e.running());
    EXPECT_FALSE(e.post([] {}));
    e.release();
    ASSERT_TRUE(e.acquire().ok());
    bool ran = false;
    EXPECT_TRUE(e.run_sync([&] { ran = e.on_thread(); }));
    EXPECT_TRUE(ran);
    e.release();
    EXPECT_EQ(threads_alive_settled(before), before);
}

// Not the last user (a server face next to the client face): retire()
// refuses and changes nothing. Nobody ends the loop: await_end() gives up
// after its limit, and release() stops and joins the thread itself.
TEST(ProgressEngine, RetireIsForTheLastUserAndAwaitEndIsBounded) {
    auto &e = ProgressEngine::instance();
    const int before = threads_alive();
    ASSERT_TRUE(e.acquire().ok());
    ASSERT_TRUE(e.acquire().ok());
    EXPECT_FALSE(e.retire());
    EXPECT_FALSE(e.await_end(std::chrono::milliseconds(10)));  // not retiring
    e.release();
    EXPECT_TRUE(e.running());
    ASSERT_TRUE(e.retire());
    EXPECT_FALSE(e.await_end(std::chrono::milliseconds(50)));
    EXPECT_TRUE(e.run_sync([] {}));  // still serving
    e.release();
    EXPECT_FALSE(e.running());
    EXPECT_EQ(threads_alive_settled(before), before);
}

// While a retiring release is under way, an acquire() from another thread
// waits for it and then starts a new thread (a tool initializing while the
// client finalizes).
TEST(ProgressEngine, AnAcquireDuringARetiringReleaseWaitsForIt) {
    auto &e = ProgressEngine::instance();
    ASSERT_TRUE(e.acquire().ok());
    ASSERT_TRUE(e.retire());
    std::atomic<bool> acquired{false};
    std::thread other([&] {
        if (e.acquire().ok()) acquired = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(acquired.load());
    ASSERT_TRUE(e.post([&e] { e.end_loop(); }));
    ASSERT_TRUE(e.await_end(std::chrono::seconds(20)));
    e.release();
    other.join();
    ASSERT_TRUE(acquired.load());
    bool ran = false;
    EXPECT_TRUE(e.run_sync([&] { ran = e.on_thread(); }));
    EXPECT_TRUE(ran);
    e.release();
}

TEST(Frame, HeaderRoundTripsAndBadHeadersAreRefusedWithAReason) {
    wire::FrameHeader h{wire::kFrameVersion, wire::kFlagReply, 6, 0xdeadbeef, 1234};
    std::uint8_t raw[wire::kFrameHeaderSize];
    wire::encode_header(h, raw);
    auto back = wire::decode_header(raw);
    EXPECT_EQ(back.command, 6);
    EXPECT_EQ(back.tag, 0xdeadbeefu);
    EXPECT_EQ(back.length, 1234u);
    wire::FrameLimits limits;
    limits.max_frame = 1000;
    EXPECT_NE(wire::check_header(back, limits).find("exceeds"), std::string::npos);
    back.length = 10;
    EXPECT_EQ(wire::check_header(back, limits), "");
    back.version = 9;
    EXPECT_NE(wire::check_header(back, limits).find("version"), std::string::npos);
    back.version = wire::kFrameVersion;
    back.flags = 0x80;
    EXPECT_NE(wire::check_header(back, limits).find("flags"), std::string::npos);
}

TEST(Frame, LargeBodiesAreCompressedAndInflateBack) {
    wire::FrameLimits limits;
    limits.compress_threshold = 100;
    std::vector<std::uint8_t> body(10000, 'a'), bytes;
    std::string reason;
    ASSERT_TRUE(wire::build_frame(5, 7, 0, body, limits, bytes, reason));
    auto h = wire::decode_header(bytes.data());
    EXPECT_TRUE(h.flags & wire::kFlagCompressed);
    EXPECT_LT(h.length, body.size());
    wire::Frame f;
    ASSERT_TRUE(wire::open_frame(
        h, std::vector<std::uint8_t>(bytes.begin() + wire::kFrameHeaderSize, bytes.end()), limits,
        f, reason));
    EXPECT_EQ(f.body, body);
    EXPECT_FALSE(f.flags & wire::kFlagCompressed);
}

TEST(Frame, FramesToAPeerOnThisHostAreNeverCompressed) {
    wire::FrameLimits limits;
    limits.compress_threshold = 100;
    std::vector<std::uint8_t> body(10000, 'a'), bytes;
    std::string reason;
    ASSERT_TRUE(
        wire::build_frame(5, 7, 0, body, limits, bytes, reason, wire::PeerPlacement::local));
    auto h = wire::decode_header(bytes.data());
    EXPECT_FALSE(h.flags & wire::kFlagCompressed);
    EXPECT_EQ(h.length, body.size());
    EXPECT_TRUE(std::equal(body.begin(), body.end(), bytes.begin() + wire::kFrameHeaderSize));
}

TEST(Frame, CompressedBodyDeclaringMoreThanTheMaximumIsRefused) {
    wire::FrameLimits limits;
    limits.compress_threshold = 100;
    std::vector<std::uint8_t> body(10000, 'a'), bytes;
    std::string reason;
    ASSERT_TRUE(wire::build_frame(5, 7, 0, body, limits, bytes, reason));
    auto h = wire::decode_header(bytes.data());
    limits.max_inflated = 5000;
    wire::Frame f;
    EXPECT_FALSE(wire::open_frame(
        h, std::vector<std::uint8_t>(bytes.begin() + wire::kFrameHeaderSize, bytes.end()), limits,
        f, reason));
    EXPECT_NE(reason.find("inflates"), std::string::npos);
    std::vector<std::uint8_t> junk(40, 0x11);
    limits.max_frame = 1 << 20;
    EXPECT_FALSE(wire::open_frame(wire::FrameHeader{1, wire::kFlagCompressed, 1, 1, 40}, junk,
                                  limits, f, reason));
}

TEST(Message, FieldsRoundTripAndTruncatedBodiesFail) {
    pmix_proc_t p{};
    std::strcpy(p.nspace, "job.1");
    p.rank = 3;
    auto body =
        wire::BodyWriter().i32(-5).str("key").proc(p).bytes(std::vector<std::uint8_t>{1, 2}).take();
    wire::BodyReader r(body);
    std::int32_t s = 0;
    std::string k;
    pmix_proc_t q{};
    std::vector<std::uint8_t> b;
    r.i32(s);
    r.str(k);
    r.proc(q);
    r.bytes(b);
    EXPECT_TRUE(r.finished());
    EXPECT_EQ(s, -5);
    EXPECT_EQ(k, "key");
    EXPECT_STREQ(q.nspace, "job.1");
    EXPECT_EQ(q.rank, 3u);
    EXPECT_EQ(b.size(), 2u);
    for (std::size_t cut = 0; cut < body.size(); ++cut) {
        wire::BodyReader t(std::span<const std::uint8_t>(body.data(), cut));
        t.i32(s);
        t.str(k);
        t.proc(q);
        t.bytes(b);
        EXPECT_FALSE(t.finished()) << "cut at " << cut;
    }
}

TEST(Message, ForgedLengthsFailWithoutAllocating) {
    auto body = wire::BodyWriter().u32(0xFFFFFFFF).take();
    wire::BodyReader r(body);
    std::string s;
    EXPECT_FALSE(r.str(s));
    auto body2 = wire::BodyWriter().u64(~0ull).take();
    wire::BodyReader r2(body2);
    wire::InfoArray info;
    EXPECT_FALSE(r2.infos(info));
}

// A sender's PMIX_INFO_PERSISTENT is a claim about the sender's memory: the
// decoded copy owns its value, and its release frees it (fuzz_frame found the
// decoded string kept, and leaked, when the flag crossed the wire).
TEST(Message, DecodedInfosOwnTheirValuesWhateverFlagsTheSenderSet) {
    pmix_info_t sent;
    PMIX_INFO_LOAD(&sent, "test.key", "a string the receiver must free", PMIX_STRING);
    sent.flags |= PMIX_INFO_PERSISTENT | PMIX_INFO_REQD;
    auto body = wire::BodyWriter().infos(&sent, 1).take();
    sent.flags &= ~static_cast<pmix_info_directives_t>(PMIX_INFO_PERSISTENT);
    PMIX_INFO_DESTRUCT(&sent);
    wire::BodyReader r(body);
    wire::InfoArray got;
    ASSERT_TRUE(r.infos(got));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got.data()[0].flags & PMIX_INFO_PERSISTENT, 0u);
    EXPECT_NE(got.data()[0].flags & PMIX_INFO_REQD, 0u);  // other directives cross as sent
    EXPECT_STREQ(got.data()[0].value.data.string, "a string the receiver must free");
}

TEST(ModexRecords, ConcatenatedStreamsParseAsOneStream) {
    pmix_proc_t a{}, b{};
    std::strcpy(a.nspace, "ns");
    std::strcpy(b.nspace, "ns");
    a.rank = 0;
    b.rank = 1;
    std::vector<std::uint8_t> s1, s2;
    wire::append_record(s1, a, std::vector<std::uint8_t>{1, 2, 3});
    wire::append_record(s2, b, std::vector<std::uint8_t>{});
    s1.insert(s1.end(), s2.begin(), s2.end());
    std::vector<wire::ModexRecord> out;
    ASSERT_TRUE(wire::parse_records(s1, out));
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].blob.size(), 3u);
    EXPECT_EQ(out[1].proc.rank, 1u);
    s1.push_back(0x42);
    out.clear();
    EXPECT_FALSE(wire::parse_records(s1, out));
}

TEST(NodeAndProcMaps, RoundTripThroughOurFormat) {
    std::vector<std::string> nodes{"n01", "n02", "n03", "n07", "login", "c1", "c2"};
    auto map = wire::encode_node_map(nodes);
    EXPECT_EQ(map, "pmixpp:1:n[2:1-3,7],login,c[0:1-2]");
    EXPECT_EQ(wire::decode_node_map(map), nodes);
    std::vector<std::vector<unsigned>> procs{{0, 1, 2, 3}, {4, 5, 9}};
    auto pmap = wire::encode_proc_map(procs);
    EXPECT_EQ(pmap, "pmixpp:1:0-3;4-5,9");
    EXPECT_EQ(wire::decode_proc_map(pmap), procs);
    EXPECT_FALSE(wire::decode_node_map("n1,n2"));
    EXPECT_FALSE(wire::decode_proc_map("pmixpp:1:3-1"));
}

// The inputs of PMIx_generate_regex / PMIx_generate_ppn.
TEST(NodeAndProcMaps, ParsesTheGenerateInputs) {
    EXPECT_TRUE(wire::split_node_list("").empty());
    EXPECT_EQ(wire::split_node_list("n1,login"), (std::vector<std::string>{"n1", "login"}));
    EXPECT_EQ(wire::parse_rank_lists("0-2;5,7"),
              (std::vector<std::vector<unsigned>>{{0, 1, 2}, {5, 7}}));
    EXPECT_FALSE(wire::parse_rank_lists("0-2;x"));
    EXPECT_FALSE(wire::parse_rank_lists("3-1"));
}

// A few bytes may not make the generate inputs allocate without bound (a
// kilobyte of "0-9999999," items made 10^9 ranks, 4 GB) nor loop for ever
// (a range ending at the largest unsigned wrapped its counter and never
// ended): all the lists together hold at most max_ranks ranks.
TEST(NodeAndProcMaps, TheGenerateInputsAreBoundedInTotal) {
    EXPECT_EQ(wire::parse_rank_lists("4294967293-4294967295"),
              (std::vector<std::vector<unsigned>>{{4294967293u, 4294967294u, 4294967295u}}));
    EXPECT_EQ(wire::parse_rank_lists("0-3;4", 5),
              (std::vector<std::vector<unsigned>>{{0, 1, 2, 3}, {4}}));
    EXPECT_FALSE(wire::parse_rank_lists("0-3;4,5", 5));
    EXPECT_FALSE(wire::parse_rank_lists("0-1,0-1,0-1", 5));
    std::string many;
    for (int i = 0; i < 2; ++i) many += (many.empty() ? "" : ";") + std::string("0-9999999");
    EXPECT_FALSE(wire::parse_rank_lists(many)); /* 2 x 10^7 > kMaxExpandedRanks */
    // The map decoders take the same kind of bound.
    EXPECT_FALSE(wire::decode_node_map("pmixpp:1:n[0:1-6]", 5));
    EXPECT_EQ(wire::decode_node_map("pmixpp:1:n[0:1-5]", 5)->size(), 5u);
    // Plain names count against the bound too: a map over it in plain names
    // decoded, and its own encoding (n[0:1-3]) then did not (fuzz_regex).
    EXPECT_FALSE(wire::decode_node_map("pmixpp:1:a[0:1-3],n1,n2,n3", 5));
    EXPECT_FALSE(wire::decode_node_map("pmixpp:1:a,b,c,d,e,f", 5));
    EXPECT_EQ(wire::decode_node_map("pmixpp:1:a,b,c,d,e", 5)->size(), 5u);
    // A bracket naming no node is malformed ("[2:]," decoded to one empty
    // name, whose encoding is the empty map: fuzz_regex).
    EXPECT_FALSE(wire::decode_node_map("pmixpp:1:[2:],"));
    EXPECT_FALSE(wire::decode_node_map("pmixpp:1:n[0:]"));
    EXPECT_FALSE(wire::decode_proc_map("pmixpp:1:0-2;3-5", 5));
    EXPECT_EQ(wire::decode_proc_map("pmixpp:1:0-2;3-4", 5)->size(), 2u);
}

// The index the datastore answers node keys from (include/pmixpp/mca/node_maps.hpp).
TEST(NodeAndProcMaps, IndexPlacesEveryRankWithoutExpandingTheMaps) {
    using pmixpp::mca::maps::MapIndex;
    auto index = MapIndex::build("pmixpp:1:n[2:1-2],login", "pmixpp:1:4-5,0;1-3;9");
    ASSERT_TRUE(index);
    EXPECT_EQ(index->num_nodes(), 3u);
    auto at = [&](pmix_rank_t r) {
        auto p = index->place(r);
        return p ? std::pair<unsigned, unsigned>{p->node, p->local_rank}
                 : std::pair<unsigned, unsigned>{99, 99};
    };
    EXPECT_EQ(at(4), (std::pair<unsigned, unsigned>{0, 0}));  // the proc map's order
    EXPECT_EQ(at(5), (std::pair<unsigned, unsigned>{0, 1}));
    EXPECT_EQ(at(0), (std::pair<unsigned, unsigned>{0, 2}));
    EXPECT_EQ(at(3), (std::pair<unsigned, unsigned>{1, 2}));
    EXPECT_EQ(at(9), (std::pair<unsigned, unsigned>{2, 0}));
    EXPECT_EQ(at(6), (std::pair<unsigned, unsigned>{99, 99}));  // on no node
    EXPECT_EQ(index->node_named("login"), 2u);
    EXPECT_EQ(index->node_named("n02"), 1u);
    EXPECT_FALSE(index->node_named("n03"));
    EXPECT_EQ(index->count_on(0), 3u);
    // A million ranks on 10,000 nodes: a run per node, nothing per rank.
    std::string procs = "pmixpp:1:";
    for (unsigned n = 0; n < 10000; ++n)
        procs += (n ? ";" : "") + std::to_string(n * 100) + "-" + std::to_string(n * 100 + 99);
    auto big = MapIndex::build("pmixpp:1:c[5:0-9999]", procs);
    ASSERT_TRUE(big);
    EXPECT_EQ(big->place(999999)->node, 9999u);
    EXPECT_EQ(big->place(123456)->local_rank, 56u);
    EXPECT_EQ(big->node_name(1234), "c01234");
    // Plain lists, as some hosts pass them.
    ASSERT_TRUE(MapIndex::build("a,b", "0,1;2"));
    EXPECT_EQ(MapIndex::build("a,b", "0,1;2")->place(2)->node, 1u);
    // Refused: a rank on two nodes, node counts that differ, someone else's regex.
    EXPECT_FALSE(MapIndex::build("pmixpp:1:a,b", "pmixpp:1:0-3;3"));
    EXPECT_FALSE(MapIndex::build("pmixpp:1:a,b", "pmixpp:1:0-3"));
    EXPECT_FALSE(MapIndex::build("pmix[n[2:1-2]]", "pmix[0-3]"));
    EXPECT_FALSE(MapIndex::build("pmixpp:1:a", "pmixpp:1:0-4294967295"));
}

// A writer waiting for the lock keeps new readers out (glibc's std::shared_mutex
// lets them in, so a stream of fast-path Gets could starve the progress thread).
TEST(WriterPreferringRwLock, AWaitingWriterKeepsNewReadersOut) {
    runtime::WriterPreferringRwLock lock;
    lock.lock_shared();  // a reader inside
    std::atomic<bool> writer_done{false};
    std::thread writer([&] {
        lock.lock();
        writer_done = true;
        lock.unlock();
    });
    // Once the writer is queued, a new reader must be refused. Poll until then
    // (bounded: with a reader-preferring lock this never happens).
    bool refused = false;
    for (int i = 0; i < 20000 && !refused; ++i) {
        if (lock.try_lock_shared()) {
            lock.unlock_shared();
            std::this_thread::sleep_for(std::chrono::microseconds(500));
        } else {
            refused = true;
        }
    }
    EXPECT_TRUE(refused) << "a new reader got in ahead of a waiting writer";
    EXPECT_FALSE(writer_done.load());
    lock.unlock_shared();
    writer.join();
    EXPECT_TRUE(writer_done.load());
}

// faults (issue 19): a write to a dead peer on the progress thread (libevent
// writes queued frames with writev, which cannot pass MSG_NOSIGNAL) fails
// with EPIPE instead of killing the process with SIGPIPE's default action.
TEST(ProgressEngine, AWriteToADeadPeerOnTheProgressThreadFailsWithoutSigpipe) {
    auto &e = ProgressEngine::instance();
    ASSERT_TRUE(e.acquire().ok());
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    ::close(fds[1]);
    Completion<int> done;
    e.post([&] {
        const ssize_t n = ::write(fds[0], "x", 1);
        done.complete(n < 0 ? errno : 0);
    });
    ASSERT_TRUE(done.wait(std::chrono::seconds(10)));
    EXPECT_EQ(done.value(), EPIPE);
    ::close(fds[0]);
    e.release();
}
