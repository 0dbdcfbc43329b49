// gds_hash: Put (store), Commit, scopes, modex blobs and job blobs, and the
// refusal of blobs that are truncated, corrupt or foreign.
#include "gds_hash_support.hpp"

#include <set>

using namespace gds_hash_test;

namespace {

// Keys a module holds for `p` after storing `blob` into a fresh peer.
std::set<std::string> keys_of(const gds::Module &m, const pmix_proc_t &p) {
    std::set<std::string> keys;
    for (const auto &[key, bytes] : all_keys(m, p)) keys.insert(key);
    return keys;
}

const pmix_proc_t kMe = proc("job1", 0);

void put_one_of_each_scope(gds::Module &m) {
    const pmix_value_t v = u32_value(1);
    ASSERT_TRUE(m.store(kMe, PMIX_LOCAL, "k.local", v).ok());
    ASSERT_TRUE(m.store(kMe, PMIX_REMOTE, "k.remote", v).ok());
    ASSERT_TRUE(m.store(kMe, PMIX_GLOBAL, "k.global", v).ok());
    ASSERT_TRUE(m.store(kMe, PMIX_INTERNAL, "k.internal", v).ok());
}

}  // namespace

TEST_F(GdsHash, StoredValueIsVisibleAtOnceAndReplacedByALaterStore) {
    const pmix_value_t first = u32_value(1);
    ASSERT_TRUE(m->store(kMe, PMIX_GLOBAL, "my.key", first).ok());
    EXPECT_EQ(get_u32(*m, kMe, "my.key"), 1u);
    pmix_value_t second{};
    second.type = PMIX_STRING;
    second.data.string = const_cast<char *>("two");
    ASSERT_TRUE(m->store(kMe, PMIX_LOCAL, "my.key", second).ok());
    EXPECT_EQ(get_str(*m, kMe, "my.key"), "two");
    EXPECT_EQ(get(*m, proc("job1", 1), "my.key")->status, PMIX_ERR_NOT_FOUND);
}

TEST_F(GdsHash, StoreRejectsAnUnknownScopeAndAnEmptyKey) {
    const pmix_value_t v = u32_value(1);
    EXPECT_EQ(m->store(kMe, 9, "my.key", v).code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(m->store(kMe, PMIX_GLOBAL, "", v).code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(get(*m, kMe, "my.key")->status, PMIX_ERR_NOT_FOUND);
}

TEST_F(GdsHash, InternalValuesAreFetchedAndListed) {
    put_one_of_each_scope(*m);
    EXPECT_EQ(get_u32(*m, kMe, "k.internal"), 1u);
    EXPECT_EQ(keys_of(*m, kMe),
              (std::set<std::string>{"k.local", "k.remote", "k.global", "k.internal"}));
}

// A host keeps its daemons' wire-up with Store_internal and reads it back
// with a NULL-key Get, also for a job it never registered (OPENMPI-CONTRACT
// §2.8).
TEST_F(GdsHash, FetchAllListsInternalValuesOfAnUnregisteredJob) {
    pmix_value_t uri{};
    uri.type = PMIX_STRING;
    uri.data.string = const_cast<char *>("tcp://10.0.0.1:5000");
    const pmix_proc_t daemon = proc("daemons", 1);
    ASSERT_TRUE(m->store(daemon, PMIX_INTERNAL, "opal.puri", uri).ok());
    EXPECT_EQ(keys_of(*m, daemon), (std::set<std::string>{"opal.puri"}));
}

TEST_F(GdsHash, FetchAllOfAProcessWithNothingIsNotFound) {
    pmix_status_t st = PMIX_SUCCESS;
    all_keys(*m, kMe, &st);
    EXPECT_EQ(st, PMIX_ERR_NOT_FOUND);
}

TEST_F(GdsHash, ModexCarriesOnlyCommittedValues) {
    const pmix_value_t v = u32_value(1);
    ASSERT_TRUE(m->store(kMe, PMIX_GLOBAL, "before", v).ok());
    ASSERT_TRUE(m->commit(kMe).ok());
    ASSERT_TRUE(m->store(kMe, PMIX_GLOBAL, "after", v).ok());
    auto blob = m->assemble_modex(kMe, PMIX_REMOTE);
    ASSERT_TRUE(blob.ok()) << blob.status().message();
    ASSERT_TRUE(peer().store_modex(kMe, blob.value()).ok());
    EXPECT_EQ(keys_of(peer(), kMe), (std::set<std::string>{"before"}));
}

TEST_F(GdsHash, LocalAudienceGetsLocalAndGlobalValues) {
    put_one_of_each_scope(*m);
    ASSERT_TRUE(m->commit(kMe).ok());
    auto blob = m->assemble_modex(kMe, PMIX_LOCAL);
    ASSERT_TRUE(blob.ok());
    ASSERT_TRUE(peer().store_modex(kMe, blob.value()).ok());
    EXPECT_EQ(keys_of(peer(), kMe), (std::set<std::string>{"k.local", "k.global"}));
    EXPECT_EQ(get(peer(), kMe, "k.internal")->status, PMIX_ERR_NOT_FOUND);
}

TEST_F(GdsHash, RemoteAudienceGetsRemoteAndGlobalValues) {
    put_one_of_each_scope(*m);
    ASSERT_TRUE(m->commit(kMe).ok());
    auto blob = m->assemble_modex(kMe, PMIX_REMOTE);
    ASSERT_TRUE(blob.ok());
    ASSERT_TRUE(peer().store_modex(kMe, blob.value()).ok());
    EXPECT_EQ(keys_of(peer(), kMe), (std::set<std::string>{"k.remote", "k.global"}));
}

TEST_F(GdsHash, StoredModexKeepsItsScopesForTheNextHop) {
    // A server receives its client's local-audience blob, then hands the
    // remote part to the host's fence.
    put_one_of_each_scope(*m);
    ASSERT_TRUE(m->commit(kMe).ok());
    auto client = m->assemble_modex(kMe, PMIX_LOCAL);
    ASSERT_TRUE(client.ok());
    // Everything a local peer may see: local + global, then also remote.
    auto remote = m->assemble_modex(kMe, PMIX_REMOTE);
    ASSERT_TRUE(remote.ok());
    ASSERT_TRUE(peer().store_modex(kMe, client.value()).ok());
    ASSERT_TRUE(peer().store_modex(kMe, remote.value()).ok());
    auto forwarded = peer().assemble_modex(kMe, PMIX_REMOTE);
    ASSERT_TRUE(forwarded.ok());

    auto third = ComponentLoader::instance().create();
    auto &far = *third.as<gds::Module>();
    ASSERT_TRUE(far.store_modex(kMe, forwarded.value()).ok());
    EXPECT_EQ(keys_of(far, kMe), (std::set<std::string>{"k.remote", "k.global"}));
}

TEST_F(GdsHash, AssembleModexRejectsAnyOtherAudience) {
    for (pmix_scope_t audience : {PMIX_SCOPE_UNDEF, PMIX_GLOBAL, PMIX_INTERNAL}) {
        EXPECT_EQ(m->assemble_modex(kMe, audience).status().code(), PMIX_ERR_BAD_PARAM);
    }
}

TEST_F(GdsHash, NothingCommittedGivesAValidEmptyBlob) {
    auto blob = m->assemble_modex(proc("nobody", 3), PMIX_LOCAL);
    ASSERT_TRUE(blob.ok());
    EXPECT_FALSE(blob.value().empty()) << "an empty blob still names its format";
    EXPECT_TRUE(peer().store_modex(kMe, blob.value()).ok());
    pmix_status_t st = PMIX_SUCCESS;
    all_keys(peer(), kMe, &st);
    EXPECT_EQ(st, PMIX_ERR_NOT_FOUND);
}

TEST_F(GdsHash, RegisteredProcessInfoIsNeverPartOfTheModex) {
    Infos pdata;
    pdata.rank(PMIX_RANK, 0).u16(PMIX_LOCAL_RANK, 0);
    Infos info;
    info.array(PMIX_PROC_DATA, pdata);
    ASSERT_TRUE(m->register_job("job1", info.span()).ok());
    const pmix_value_t v = u32_value(1);
    ASSERT_TRUE(m->store(kMe, PMIX_GLOBAL, "user.key", v).ok());
    ASSERT_TRUE(m->commit(kMe).ok());
    auto blob = m->assemble_modex(kMe, PMIX_LOCAL);
    ASSERT_TRUE(blob.ok());
    ASSERT_TRUE(peer().store_modex(kMe, blob.value()).ok());
    EXPECT_EQ(keys_of(peer(), kMe), (std::set<std::string>{"user.key"}));
}

TEST_F(GdsHash, StoredModexReplacesValuesOfTheSameKey) {
    const pmix_value_t old_value = u32_value(1), new_value = u32_value(2);
    ASSERT_TRUE(peer().store(kMe, PMIX_GLOBAL, "k", old_value).ok());
    ASSERT_TRUE(m->store(kMe, PMIX_GLOBAL, "k", new_value).ok());
    ASSERT_TRUE(m->commit(kMe).ok());
    auto blob = m->assemble_modex(kMe, PMIX_LOCAL);
    ASSERT_TRUE(blob.ok());
    ASSERT_TRUE(peer().store_modex(kMe, blob.value()).ok());
    EXPECT_EQ(get_u32(peer(), kMe, "k"), 2u);
}

TEST_F(GdsHash, ConcatenatedBlobsOfOneProcessStoreTogether) {
    const pmix_value_t v = u32_value(1);
    ASSERT_TRUE(m->store(kMe, PMIX_LOCAL, "first", v).ok());
    ASSERT_TRUE(m->commit(kMe).ok());
    auto a = m->assemble_modex(kMe, PMIX_LOCAL);
    ASSERT_TRUE(m->store(kMe, PMIX_LOCAL, "second", v).ok());
    ASSERT_TRUE(m->commit(kMe).ok());
    auto b = m->assemble_modex(kMe, PMIX_REMOTE);  // nothing: an empty segment
    auto c = m->assemble_modex(kMe, PMIX_LOCAL);
    ASSERT_TRUE(a.ok() && b.ok() && c.ok());
    gds::Blob joined = a.value();
    joined.insert(joined.end(), b.value().begin(), b.value().end());
    joined.insert(joined.end(), c.value().begin(), c.value().end());
    ASSERT_TRUE(peer().store_modex(kMe, joined).ok());
    EXPECT_EQ(keys_of(peer(), kMe), (std::set<std::string>{"first", "second"}));
}

// Interface 1.2: each scope's values alone (a commit sends its GLOBAL ones
// once); LOCAL + GLOBAL joined is what the LOCAL audience sees.
TEST_F(GdsHash, ScopeBlobsHoldExactlyThatScope) {
    put_one_of_each_scope(*m);
    auto pending_global = m->assemble_modex_scope(kMe, PMIX_GLOBAL, true);
    ASSERT_TRUE(m->commit(kMe).ok());
    const pmix_value_t v = u32_value(2);
    ASSERT_TRUE(m->store(kMe, PMIX_GLOBAL, "k.later", v).ok());
    ASSERT_TRUE(pending_global.ok());
    ASSERT_TRUE(peer().store_modex(kMe, pending_global.value()).ok());
    EXPECT_EQ(keys_of(peer(), kMe), (std::set<std::string>{"k.global"}));
    auto pending = m->assemble_modex_scope(kMe, PMIX_GLOBAL, true);
    ASSERT_TRUE(pending.ok());
    auto other = ComponentLoader::instance().create();
    ASSERT_TRUE(other);
    ASSERT_TRUE(other.as<gds::Module>()->store_modex(kMe, pending.value()).ok());
    EXPECT_EQ(keys_of(*other.as<gds::Module>(), kMe), (std::set<std::string>{"k.later"}));
    for (pmix_scope_t scope : {PMIX_LOCAL, PMIX_REMOTE}) {
        auto own = m->assemble_modex_scope(kMe, scope, false);
        auto global = m->assemble_modex_scope(kMe, PMIX_GLOBAL, false);
        ASSERT_TRUE(own.ok() && global.ok());
        gds::Blob joined = own.value();
        joined.insert(joined.end(), global.value().begin(), global.value().end());
        auto receiver = ComponentLoader::instance().create();
        ASSERT_TRUE(receiver);
        ASSERT_TRUE(receiver.as<gds::Module>()->store_modex(kMe, joined).ok());
        EXPECT_EQ(
            keys_of(*receiver.as<gds::Module>(), kMe),
            (std::set<std::string>{scope == PMIX_LOCAL ? "k.local" : "k.remote", "k.global"}));
    }
    EXPECT_EQ(m->assemble_modex_scope(kMe, PMIX_INTERNAL, false).status().code(),
              PMIX_ERR_BAD_PARAM);
    // Nothing of that scope: no segment at all.
    auto none = m->assemble_modex_scope(kMe, PMIX_LOCAL, true);
    ASSERT_TRUE(none.ok());
    EXPECT_TRUE(none.value().empty());
}

TEST_F(GdsHash, ASegmentIsItsFieldsPackedOneByOne) {
    // blob_format.hpp's layout, each field its own PMIx_Data_pack; the
    // writer starts every segment from a copy of its first three fields.
    const pmix_value_t v = u32_value(7);
    ASSERT_TRUE(m->store(kMe, PMIX_GLOBAL, "k.one", v).ok());
    ASSERT_TRUE(m->commit(kMe).ok());
    for (int round = 0; round < 2; ++round) {  // the second from the kept copy
        auto blob = m->assemble_modex_scope(kMe, PMIX_GLOBAL, false);
        ASSERT_TRUE(blob.ok());
        pmix_data_buffer_t want{};
        char *name = const_cast<char *>("pmixpp.gds_hash");
        std::uint16_t version = 1;
        std::uint8_t kind = 1;
        std::uint32_t count = 1;
        char *key = const_cast<char *>("k.one");
        pmix_scope_t scope = PMIX_GLOBAL;
        ASSERT_EQ(PMIx_Data_pack(nullptr, &want, &name, 1, PMIX_STRING), PMIX_SUCCESS);
        ASSERT_EQ(PMIx_Data_pack(nullptr, &want, &version, 1, PMIX_UINT16), PMIX_SUCCESS);
        ASSERT_EQ(PMIx_Data_pack(nullptr, &want, &kind, 1, PMIX_UINT8), PMIX_SUCCESS);
        ASSERT_EQ(PMIx_Data_pack(nullptr, &want, &count, 1, PMIX_UINT32), PMIX_SUCCESS);
        ASSERT_EQ(PMIx_Data_pack(nullptr, &want, &key, 1, PMIX_STRING), PMIX_SUCCESS);
        ASSERT_EQ(PMIx_Data_pack(nullptr, &want, &scope, 1, PMIX_SCOPE), PMIX_SUCCESS);
        ASSERT_EQ(PMIx_Data_pack(nullptr, &want, const_cast<pmix_value_t *>(&v), 1, PMIX_VALUE),
                  PMIX_SUCCESS);
        const auto *w = reinterpret_cast<const std::byte *>(want.base_ptr);
        EXPECT_EQ(blob.value(), gds::Blob(w, w + want.bytes_used));
        PMIX_DATA_BUFFER_DESTRUCT(&want);
    }
}

// --- blobs that must be refused --------------------------------------------------------

TEST_F(GdsHash, TruncatedModexBlobIsRefusedAndStoresNothing) {
    pmix_value_t s{};
    s.type = PMIX_STRING;
    s.data.string = const_cast<char *>("a string value");
    ASSERT_TRUE(m->store(kMe, PMIX_GLOBAL, "a", s).ok());
    ASSERT_TRUE(m->store(kMe, PMIX_GLOBAL, "b", u32_value(2)).ok());
    ASSERT_TRUE(m->commit(kMe).ok());
    auto blob = m->assemble_modex(kMe, PMIX_LOCAL);
    ASSERT_TRUE(blob.ok());
    const gds::Blob &full = blob.value();
    for (std::size_t n = 1; n < full.size(); ++n) {
        const auto st = peer().store_modex(kMe, std::span(full.data(), n));
        EXPECT_EQ(st.code(), PMIX_ERR_UNPACK_FAILURE) << "prefix of " << n << " bytes";
        EXPECT_EQ(get(peer(), kMe, "a")->status, PMIX_ERR_NOT_FOUND) << n << " bytes";
        EXPECT_EQ(get(peer(), kMe, "b")->status, PMIX_ERR_NOT_FOUND) << n << " bytes";
    }
    EXPECT_TRUE(peer().store_modex(kMe, full).ok());
}

TEST_F(GdsHash, ForeignBytesAreRefused) {
    const std::string text = "certainly not a gds_hash blob";
    const auto *bytes = reinterpret_cast<const std::byte *>(text.data());
    const auto st = m->store_modex(kMe, std::span(bytes, text.size()));
    EXPECT_EQ(st.code(), PMIX_ERR_UNPACK_FAILURE);
    EXPECT_EQ(m->store_job("job1", std::span(bytes, text.size())).code(), PMIX_ERR_UNPACK_FAILURE);
    // Valid PMIx-packed data, but not in this module's format.
    pmix_data_buffer_t buf{};
    char *other = const_cast<char *>("pmixpp.gds_other");
    ASSERT_EQ(PMIx_Data_pack(nullptr, &buf, &other, 1, PMIX_STRING), PMIX_SUCCESS);
    const auto *packed_bytes = reinterpret_cast<const std::byte *>(buf.base_ptr);
    EXPECT_EQ(m->store_modex(kMe, std::span(packed_bytes, buf.bytes_used)).code(),
              PMIX_ERR_UNPACK_FAILURE);
    PMIX_DATA_BUFFER_DESTRUCT(&buf);
}

TEST_F(GdsHash, CorruptedItemIsRefusedAndNothingBeforeItIsStored) {
    ASSERT_TRUE(m->store(kMe, PMIX_GLOBAL, "a", u32_value(1)).ok());
    ASSERT_TRUE(m->store(kMe, PMIX_GLOBAL, "b", u32_value(2)).ok());
    ASSERT_TRUE(m->commit(kMe).ok());
    auto blob = m->assemble_modex(kMe, PMIX_LOCAL);
    ASSERT_TRUE(blob.ok());
    // Overwrite the last item's value type tag region: flip every byte of
    // the tail in turn; each corruption must be refused or store a full,
    // well-formed blob, never half of one.
    const gds::Blob &full = blob.value();
    std::size_t refused = 0;
    for (std::size_t i = 0; i < full.size(); ++i) {
        gds::Blob bad = full;
        bad[i] = static_cast<std::byte>(~std::to_integer<unsigned>(bad[i]));
        auto fresh = ComponentLoader::instance().create();
        auto &target = *fresh.as<gds::Module>();
        const auto st = target.store_modex(kMe, bad);
        if (st.ok()) continue;  // e.g. a flipped value bit: still well-formed
        ++refused;
        EXPECT_EQ(st.code(), PMIX_ERR_UNPACK_FAILURE) << "byte " << i;
        pmix_status_t all = PMIX_SUCCESS;
        all_keys(target, kMe, &all);
        EXPECT_EQ(all, PMIX_ERR_NOT_FOUND) << "byte " << i << ": part of a refused blob stored";
    }
    EXPECT_GT(refused, full.size() / 2);
}

TEST_F(GdsHash, JobAndModexBlobsAreNotInterchangeable) {
    Infos info;
    info.u32(PMIX_JOB_SIZE, 4);
    ASSERT_TRUE(m->register_job("job1", info.span()).ok());
    ASSERT_TRUE(m->store(kMe, PMIX_GLOBAL, "k", u32_value(1)).ok());
    ASSERT_TRUE(m->commit(kMe).ok());
    auto job_blob = m->assemble_job("job1");
    auto modex_blob = m->assemble_modex(kMe, PMIX_LOCAL);
    ASSERT_TRUE(job_blob.ok() && modex_blob.ok());
    EXPECT_EQ(peer().store_modex(kMe, job_blob.value()).code(), PMIX_ERR_UNPACK_FAILURE);
    EXPECT_EQ(peer().store_job("job1", modex_blob.value()).code(), PMIX_ERR_UNPACK_FAILURE);
    EXPECT_EQ(get(peer(), job("job1"), PMIX_JOB_SIZE)->status, PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(get(peer(), kMe, "k")->status, PMIX_ERR_NOT_FOUND);
}

// --- job blobs -------------------------------------------------------------------------

TEST_F(GdsHash, JobBlobGivesAClientEveryRealmOfItsJob) {
    Infos session;
    session.u32(PMIX_SESSION_ID, 3).u32(PMIX_UNIV_SIZE, 64);
    Infos app1;
    app1.u32(PMIX_APPNUM, 1).u32(PMIX_APP_SIZE, 3);
    Infos node;
    node.u32(PMIX_NODEID, 5).str(PMIX_HOSTNAME, "far").u32(PMIX_NODE_SIZE, 12);
    Infos rank1;
    rank1.rank(PMIX_RANK, 1).u16(PMIX_LOCAL_RANK, 1).u32(PMIX_APPNUM, 1).u32(PMIX_NODEID, 5);
    Infos info;
    info.u32(PMIX_JOB_SIZE, 4)
        .array(PMIX_SESSION_INFO_ARRAY, session)
        .array(PMIX_APP_INFO_ARRAY, app1)
        .array(PMIX_NODE_INFO_ARRAY, node)
        .array(PMIX_PROC_DATA, rank1);
    ASSERT_TRUE(m->register_job("job1", info.span()).ok());
    ASSERT_TRUE(m->store(proc("job1", 1), PMIX_GLOBAL, "put.key", u32_value(1)).ok());
    ASSERT_TRUE(m->store(job("job1"), PMIX_INTERNAL, "secret", u32_value(1)).ok());

    auto blob = m->assemble_job("job1");
    ASSERT_TRUE(blob.ok()) << blob.status().message();
    gds::Module &client = peer();
    ASSERT_TRUE(client.store_job("job1", blob.value()).ok());

    EXPECT_EQ(get_u32(client, job("job1"), PMIX_JOB_SIZE), 4u);
    EXPECT_EQ(get_u32(client, job("job1"), PMIX_UNIV_SIZE), 64u);
    Infos appnum1;
    appnum1.u32(PMIX_APPNUM, 1);
    EXPECT_EQ(get_u32(client, job("job1"), PMIX_APP_SIZE, appnum1), 3u);
    EXPECT_EQ(get_u32(client, proc("job1", 1), PMIX_APP_SIZE), 3u);
    Infos far;
    far.str(PMIX_HOSTNAME, "far");
    EXPECT_EQ(get_u32(client, job("job1"), PMIX_NODE_SIZE, far), 12u);
    EXPECT_EQ(get_u32(client, proc("job1", 1), PMIX_NODE_SIZE), 12u);
    auto local = get(client, proc("job1", 1), PMIX_LOCAL_RANK);
    ASSERT_TRUE(local->ok());
    EXPECT_EQ(local->value.type, PMIX_UINT16);
    // Put data travels in modex blobs, internal data nowhere.
    EXPECT_EQ(get(client, proc("job1", 1), "put.key")->status, PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(get(client, job("job1"), "secret")->status, PMIX_ERR_NOT_FOUND);
    // Registered data is not the client's modex.
    ASSERT_TRUE(client.commit(proc("job1", 1)).ok());
    auto modex = client.assemble_modex(proc("job1", 1), PMIX_LOCAL);
    ASSERT_TRUE(modex.ok());
    auto third = ComponentLoader::instance().create();
    ASSERT_TRUE(third.as<gds::Module>()->store_modex(proc("job1", 1), modex.value()).ok());
    EXPECT_EQ(get(*third.as<gds::Module>(), proc("job1", 1), PMIX_LOCAL_RANK)->status,
              PMIX_ERR_NOT_FOUND);
}

TEST_F(GdsHash, TruncatedJobBlobIsRefusedAndStoresNothing) {
    Infos pdata;
    pdata.rank(PMIX_RANK, 0).str(PMIX_HOSTNAME, "alpha");
    Infos info;
    info.u32(PMIX_JOB_SIZE, 4).array(PMIX_PROC_DATA, pdata);
    ASSERT_TRUE(m->register_job("job1", info.span()).ok());
    auto blob = m->assemble_job("job1");
    ASSERT_TRUE(blob.ok());
    const gds::Blob &full = blob.value();
    for (std::size_t n = 1; n < full.size(); ++n) {
        EXPECT_EQ(peer().store_job("job1", std::span(full.data(), n)).code(),
                  PMIX_ERR_UNPACK_FAILURE)
            << n << " bytes";
        EXPECT_EQ(get(peer(), job("job1"), PMIX_JOB_SIZE)->status, PMIX_ERR_NOT_FOUND);
    }
}

TEST_F(GdsHash, AssembleJobOfAnUnknownJobIsNotFound) {
    EXPECT_EQ(m->assemble_job("job9").status().code(), PMIX_ERR_NOT_FOUND);
}
