// A reader/writer lock that lets a waiting writer in before new readers.
//
// std::shared_mutex on glibc prefers readers: threads that keep calling a
// fast-path reader (PMIx_Get of data the process holds) can keep the progress
// thread's writes (fence data, commits, job info) waiting indefinitely. With
// this lock a writer waits only for the readers already inside. Not recursive:
// a thread holding it shared must not take it again while a writer waits.
// Meets SharedMutex, so std::shared_lock / std::unique_lock work with it.
#pragma once

#include <pthread.h>

namespace pmixpp::runtime {

class WriterPreferringRwLock {
  public:
    WriterPreferringRwLock() noexcept {
        pthread_rwlockattr_t attr;
        pthread_rwlockattr_init(&attr);
        pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
        pthread_rwlock_init(&lock_, &attr);
        pthread_rwlockattr_destroy(&attr);
    }
    ~WriterPreferringRwLock() { pthread_rwlock_destroy(&lock_); }
    WriterPreferringRwLock(const WriterPreferringRwLock &) = delete;
    WriterPreferringRwLock &operator=(const WriterPreferringRwLock &) = delete;

    void lock() noexcept { pthread_rwlock_wrlock(&lock_); }
    bool try_lock() noexcept { return pthread_rwlock_trywrlock(&lock_) == 0; }
    void unlock() noexcept { pthread_rwlock_unlock(&lock_); }
    void lock_shared() noexcept { pthread_rwlock_rdlock(&lock_); }
    bool try_lock_shared() noexcept { return pthread_rwlock_tryrdlock(&lock_) == 0; }
    void unlock_shared() noexcept { pthread_rwlock_unlock(&lock_); }

  private:
    pthread_rwlock_t lock_;
};

}  // namespace pmixpp::runtime
