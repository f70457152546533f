#pragma once
// A fixed pool of worker threads for data-parallel loops. The calling thread takes part, so
// a pool of n threads starts n-1 workers. Work is split into tasks handed out by an atomic
// counter; run() returns when every task is done. Not reentrant.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace ember::tensor {

class ThreadPool {
public:
    explicit ThreadPool(int n_threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return n_threads_; }

    // Calls fn(task, thread) for task in [0, n_tasks), spread over the threads; `thread` in
    // [0, size()) identifies the calling thread, for per-thread scratch. fn is called by
    // reference (no std::function, which would allocate for larger captures on every call).
    template <class Fn>
    void run(int64_t n_tasks, Fn&& fn) {
        run_task(n_tasks, Task{&fn, [](void* f, int64_t task, int thread) { (*static_cast<Fn*>(f))(task, thread); }});
    }

private:
    struct Task {
        void* fn;
        void (*call)(void* fn, int64_t task, int thread);
    };
    void run_task(int64_t n_tasks, Task task);
    void worker_loop(int thread);
    void drain(int thread);

    int n_threads_;
    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    std::atomic<uint64_t> generation_{0};
    std::atomic<bool> stop_{false};
    Task job_{nullptr, nullptr};
    int64_t n_tasks_ = 0;
    std::atomic<int64_t> next_{0};
    std::atomic<int> pending_{0};  // workers still inside the current job
};

// Hardware threads this process may use.
int default_thread_count();

}  // namespace ember::tensor
