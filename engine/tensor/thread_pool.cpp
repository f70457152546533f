#include "tensor/thread_pool.h"

#include <algorithm>
#include <sched.h>

namespace ember::tensor {

ThreadPool::ThreadPool(int n_threads) : n_threads_(std::max(1, n_threads)) {
    for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
}

void ThreadPool::drain(int thread) {
    for (;;) {
        const int64_t task = next_.fetch_add(1, std::memory_order_relaxed);
        if (task >= n_tasks_) return;
        (*job_)(task, thread);
    }
}

void ThreadPool::run(int64_t n_tasks, const Task& fn) {
    if (n_tasks <= 0) return;
    if (workers_.empty() || n_tasks == 1) {
        for (int64_t t = 0; t < n_tasks; ++t) fn(t, 0);
        return;
    }
    {
        std::lock_guard lock(mutex_);
        job_ = &fn;
        n_tasks_ = n_tasks;
        next_.store(0, std::memory_order_relaxed);
        active_workers_ = int(workers_.size());
        ++generation_;
    }
    wake_.notify_all();
    drain(0);
    std::unique_lock lock(mutex_);
    // Workers leave the job only after the last task finished, so fn outlives every use.
    done_.wait(lock, [&] { return active_workers_ == 0; });
    job_ = nullptr;
}

void ThreadPool::worker_loop(int thread) {
    uint64_t seen = 0;
    for (;;) {
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_) return;
            seen = generation_;
        }
        drain(thread);
        std::lock_guard lock(mutex_);
        if (--active_workers_ == 0) done_.notify_one();
    }
}

int default_thread_count() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
    return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace ember::tensor
