// gds_hash: every basic PMIx type and data arrays come back with exactly the
// type and contents they were stored with: from store(), through a modex
// blob, and through a job blob.
#include "gds_hash_support.hpp"

#include <sys/time.h>

#include <functional>

using namespace gds_hash_test;

namespace {

// One sample value per type, built with PMIx_Value_load (a deep copy).
struct Sample {
    std::string name;
    pmix_value_t value{};
};

class Samples {
  public:
    Samples() {
        add_scalar<bool>("bool", PMIX_BOOL, true);
        add_scalar<std::uint8_t>("byte", PMIX_BYTE, 0xab);
        add("string", "a string", PMIX_STRING);
        add_scalar<std::size_t>("size", PMIX_SIZE, 1234567);
        add_scalar<pid_t>("pid", PMIX_PID, 4321);
        add_scalar<int>("int", PMIX_INT, -5);
        add_scalar<std::int8_t>("int8", PMIX_INT8, -8);
        add_scalar<std::int16_t>("int16", PMIX_INT16, -16);
        add_scalar<std::int32_t>("int32", PMIX_INT32, -32);
        add_scalar<std::int64_t>("int64", PMIX_INT64, -64000000000LL);
        add_scalar<unsigned>("uint", PMIX_UINT, 5);
        add_scalar<std::uint8_t>("uint8", PMIX_UINT8, 8);
        add_scalar<std::uint16_t>("uint16", PMIX_UINT16, 16);
        add_scalar<std::uint32_t>("uint32", PMIX_UINT32, 32);
        add_scalar<std::uint64_t>("uint64", PMIX_UINT64, 64000000000ULL);
        add_scalar<float>("float", PMIX_FLOAT, 1.5f);
        add_scalar<double>("double", PMIX_DOUBLE, 2.25);
        add_scalar<timeval>("timeval", PMIX_TIMEVAL, timeval{12, 34});
        add_scalar<time_t>("time", PMIX_TIME, 1700000000);
        add_scalar<pmix_status_t>("status", PMIX_STATUS, PMIX_ERR_NOT_FOUND);
        add_scalar<pmix_rank_t>("rank", PMIX_PROC_RANK, 17);
        add_scalar<pmix_persistence_t>("persist", PMIX_PERSIST, PMIX_PERSIST_SESSION);
        add_scalar<pmix_scope_t>("scope", PMIX_SCOPE, PMIX_REMOTE);
        add_scalar<pmix_data_range_t>("range", PMIX_DATA_RANGE, PMIX_RANGE_NAMESPACE);
        add_scalar<pmix_proc_state_t>("state", PMIX_PROC_STATE, PMIX_PROC_STATE_RUNNING);
        add_scalar<pmix_data_type_t>("datatype", PMIX_DATA_TYPE, PMIX_DOUBLE);
        add_scalar<pmix_info_directives_t>("directives", PMIX_INFO_DIRECTIVES, PMIX_INFO_REQD);
        add_scalar<pmix_alloc_directive_t>("alloc", PMIX_ALLOC_DIRECTIVE, PMIX_ALLOC_EXTEND);
        add_scalar<pmix_iof_channel_t>("iof", PMIX_IOF_CHANNEL, PMIX_FWD_STDOUT_CHANNEL);
        add_scalar<pmix_job_state_t>("jstate", PMIX_JOB_STATE, PMIX_JOB_STATE_RUNNING);
        add_scalar<pmix_link_state_t>("link", PMIX_LINK_STATE, PMIX_LINK_UP);
        add_scalar<pmix_locality_t>("locality", PMIX_LOCTYPE, PMIX_LOCALITY_SHARE_NODE);
        add_scalar<pmix_device_type_t>("devtype", PMIX_DEVTYPE, PMIX_DEVTYPE_GPU);

        pmix_proc_t p = proc("some.job", 3);
        add("proc", &p, PMIX_PROC);
        pmix_nspace_t ns = "an.nspace";
        add("nspace", &ns, PMIX_PROC_NSPACE);
        char bytes[] = {1, 0, 2, 0, 3};
        pmix_byte_object_t bo{bytes, sizeof bytes};
        add("bytes", &bo, PMIX_BYTE_OBJECT);
        add("compressed", &bo, PMIX_COMPRESSED_STRING);
        add("regex", &bo, PMIX_REGEX);
        pmix_envar_t env{const_cast<char *>("PATH"), const_cast<char *>("/bin"), ':'};
        add("envar", &env, PMIX_ENVAR);

        std::uint32_t u32s[] = {1, 2, 3};
        pmix_data_array_t a_u32{PMIX_UINT32, 3, u32s};
        add("array.uint32", &a_u32, PMIX_DATA_ARRAY);
        char *strs[] = {const_cast<char *>("x"), const_cast<char *>("yz")};
        pmix_data_array_t a_str{PMIX_STRING, 2, strs};
        add("array.string", &a_str, PMIX_DATA_ARRAY);
        pmix_proc_t procs[] = {proc("a", 1), proc("b", 2)};
        pmix_data_array_t a_proc{PMIX_PROC, 2, procs};
        add("array.proc", &a_proc, PMIX_DATA_ARRAY);
        // Nested: an info array holding an info array.
        Infos inner;
        inner.u32("inner.u32", 9).str("inner.str", "deep");
        Infos outer;
        outer.u16("outer.u16", 7).array("outer.array", inner);
        pmix_data_array_t a_info{PMIX_INFO, outer.size(),
                                 const_cast<pmix_info_t *>(outer.span().data())};
        add("array.info", &a_info, PMIX_DATA_ARRAY);
        pmix_data_array_t empty{PMIX_UINT64, 0, nullptr};
        add("array.empty", &empty, PMIX_DATA_ARRAY);
    }
    ~Samples() {
        for (auto &s : samples_) PMIx_Value_destruct(&s.value);
    }
    const std::vector<Sample> &all() const { return samples_; }

  private:
    template <class T>
    void add_scalar(const char *name, pmix_data_type_t type, T v) {
        add(name, &v, type);
    }
    void add(const char *name, const void *data, pmix_data_type_t type) {
        Sample s;
        s.name = std::string("sample.") + name;
        EXPECT_EQ(PMIx_Value_load(&s.value, data, type), PMIX_SUCCESS) << name;
        samples_.push_back(std::move(s));
    }
    std::vector<Sample> samples_;
};

// Fetches every sample back from `m` for `p` and compares type and contents.
void expect_all_samples(const gds::Module &m, const pmix_proc_t &p, const Samples &samples,
                        const std::string &path) {
    for (const auto &s : samples.all()) {
        auto got = get(m, p, s.name);
        ASSERT_TRUE(got->ok()) << path << ": " << s.name;
        EXPECT_EQ(got->value.type, s.value.type)
            << path << ": " << s.name << " came back as " << PMIx_Data_type_string(got->value.type);
        EXPECT_EQ(packed(got->value), packed(s.value)) << path << ": " << s.name;
    }
}

}  // namespace

TEST_F(GdsHash, EveryTypeRoundTripsThroughStoreAndFetch) {
    Samples samples;
    const pmix_proc_t me = proc("job1", 0);
    for (const auto &s : samples.all())
        ASSERT_TRUE(m->store(me, PMIX_GLOBAL, s.name, s.value).ok());
    expect_all_samples(*m, me, samples, "store");
}

TEST_F(GdsHash, StoredValuesAreDeepCopies) {
    char text[] = "original";
    pmix_value_t v{};
    v.type = PMIX_STRING;
    v.data.string = text;
    ASSERT_TRUE(m->store(proc("job1", 0), PMIX_GLOBAL, "k", v).ok());
    text[0] = 'X';
    EXPECT_EQ(get_str(*m, proc("job1", 0), "k"), "original");
}

TEST_F(GdsHash, EveryTypeRoundTripsThroughAModexBlob) {
    Samples samples;
    const pmix_proc_t me = proc("job1", 0);
    for (const auto &s : samples.all())
        ASSERT_TRUE(m->store(me, PMIX_GLOBAL, s.name, s.value).ok());
    ASSERT_TRUE(m->commit(me).ok());
    auto blob = m->assemble_modex(me, PMIX_REMOTE);
    ASSERT_TRUE(blob.ok()) << blob.status().message();
    ASSERT_TRUE(peer().store_modex(me, blob.value()).ok());
    expect_all_samples(peer(), me, samples, "modex");
}

TEST_F(GdsHash, EveryTypeRoundTripsThroughRegistrationAndAJobBlob) {
    Samples samples;
    // Job-level infos and one PMIX_PROC_DATA array for rank 0, each holding
    // every sample (copied with PMIx_Value_xfer: exact type).
    std::vector<pmix_info_t> job_items(samples.all().size());
    std::vector<pmix_info_t> proc_items(samples.all().size() + 1);
    pmix_rank_t zero = 0;
    ASSERT_EQ(PMIx_Info_load(&proc_items[0], PMIX_RANK, &zero, PMIX_PROC_RANK), PMIX_SUCCESS);
    for (std::size_t i = 0; i < samples.all().size(); ++i) {
        const auto &s = samples.all()[i];
        std::snprintf(job_items[i].key, sizeof(job_items[i].key), "%s", s.name.c_str());
        ASSERT_EQ(PMIx_Value_xfer(&job_items[i].value, &s.value), PMIX_SUCCESS);
        std::snprintf(proc_items[i + 1].key, sizeof(proc_items[i + 1].key), "%s", s.name.c_str());
        ASSERT_EQ(PMIx_Value_xfer(&proc_items[i + 1].value, &s.value), PMIX_SUCCESS);
    }
    pmix_info_t pdata_item{};
    pmix_data_array_t parray{PMIX_INFO, proc_items.size(), proc_items.data()};
    ASSERT_EQ(PMIx_Info_load(&pdata_item, PMIX_PROC_DATA, &parray, PMIX_DATA_ARRAY), PMIX_SUCCESS);
    job_items.push_back(pdata_item);

    ASSERT_TRUE(m->register_job("job1", job_items).ok());
    expect_all_samples(*m, job("job1"), samples, "registered job level");
    expect_all_samples(*m, proc("job1", 0), samples, "registered proc level");

    auto blob = m->assemble_job("job1");
    ASSERT_TRUE(blob.ok()) << blob.status().message();
    ASSERT_TRUE(peer().store_job("job1", blob.value()).ok());
    expect_all_samples(peer(), job("job1"), samples, "job blob, job level");
    expect_all_samples(peer(), proc("job1", 0), samples, "job blob, proc level");

    for (auto &i : job_items) PMIx_Value_destruct(&i.value);
    for (auto &i : proc_items) PMIx_Value_destruct(&i.value);
}
