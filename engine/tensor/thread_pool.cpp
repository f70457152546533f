#include "tensor/thread_pool.h"

#include <algorithm>
#if defined(__linux__)
#include <sched.h>
#endif

#include "common/cpu_hints.h"

namespace ember::tensor {

ThreadPool::ThreadPool(int n_threads) : n_threads_(std::max(1, n_threads)) {
    for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

namespace {

// Between the matmuls of one token the gaps are microseconds; a short spin before sleeping
// saves a futex wake-up per matmul (hundreds per token).
constexpr int kSpinIterations = 20000;

}  // namespace

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(mutex_);
        stop_.store(true);
        generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
}

void ThreadPool::drain(int thread) {
    for (;;) {
        const int64_t task = next_.fetch_add(1, std::memory_order_relaxed);
        if (task >= n_tasks_) return;
        job_.call(job_.fn, task, thread);
    }
}

void ThreadPool::run_task(int64_t n_tasks, Task task) {
    if (n_tasks <= 0) return;
    if (workers_.empty() || n_tasks == 1) {
        for (int64_t t = 0; t < n_tasks; ++t) task.call(task.fn, t, 0);
        return;
    }
    job_ = task;
    n_tasks_ = n_tasks;
    next_.store(0, std::memory_order_relaxed);
    pending_.store(int(workers_.size()), std::memory_order_relaxed);
    {
        // Under the mutex, so a worker about to sleep cannot miss the new generation.
        std::lock_guard lock(mutex_);
        generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    drain(0);
    // Workers leave the job only after the last task finished, so fn outlives every use.
    for (int spin = 0; pending_.load(std::memory_order_acquire) != 0; ++spin) {
        if (spin < kSpinIterations) {
            cpu_relax();
            continue;
        }
        std::unique_lock lock(mutex_);
        done_.wait(lock, [&] { return pending_.load(std::memory_order_acquire) == 0; });
    }
    job_ = Task{nullptr, nullptr};
}

void ThreadPool::worker_loop(int thread) {
    uint64_t seen = 0;
    for (;;) {
        for (int spin = 0; spin < kSpinIterations && generation_.load(std::memory_order_acquire) == seen; ++spin)
            cpu_relax();
        if (generation_.load(std::memory_order_acquire) == seen) {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
        }
        if (stop_.load()) return;
        seen = generation_.load(std::memory_order_acquire);
        drain(thread);
        if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            std::lock_guard lock(mutex_);
            done_.notify_one();
        }
    }
}

int default_thread_count() {
#if defined(__linux__)
    // The CPUs this process may run on (a container's or taskset's share), not the machine's.
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
    return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace ember::tensor
