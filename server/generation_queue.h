#pragma once
// One model's generations, one at a time in the order they were asked for, on a worker thread
// that owns the session. Each request's text flows back through its Stream; a request whose
// client has gone is cancelled, queued or running. The context the last request left is kept,
// so a request that shares a prefix with it (a chat grown by one turn) evaluates only the rest.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ember/model.h"
#include "ember/result.h"
#include "ember/session.h"

namespace ember::server {

struct Job {
    std::vector<int32_t> prompt;  // non-empty
    GenerateParams params;
    std::vector<std::string> stop;
};

struct Outcome {
    std::string finish_reason;     // "stop" (end of generation or a stop sequence), "length", "cancelled"
    int32_t prompt_tokens = 0;
    int32_t cached_tokens = 0;     // of which were already in the context
    int32_t completion_tokens = 0;
    Timings timings;
    std::optional<Error> error;    // the engine failed; the text sent so far stands
};

// Between the HTTP thread answering a request and the worker generating it.
class Stream {
public:
    struct Taken {
        // What came since the last take, one piece per push: a streamed answer sends one event
        // per piece, as clients that count events as tokens expect.
        std::vector<std::string> pieces;
        bool finished = false;
    };
    // Waits until there is a piece, the generation ended, or `wait` passed.
    Taken take(std::chrono::milliseconds wait);
    // Valid once take() said finished.
    const Outcome& outcome() const { return outcome_; }
    bool cancelled() const;

    void push(const std::string& text);
    void finish(Outcome outcome);

private:
    friend class GenerationQueue;
    mutable std::mutex mutex_;
    std::condition_variable ready_;
    std::vector<std::string> pieces_;
    bool finished_ = false;
    bool cancelled_ = false;
    Outcome outcome_;
};

struct QueueCounters {
    int64_t requests = 0;           // finished, ever
    int64_t cancelled = 0;          // of which cancelled because their client went away
    int64_t prompt_tokens = 0;      // evaluated (not counting cached prefixes), ever
    int64_t cached_tokens = 0;      // reused from the context instead, ever
    int64_t generated_tokens = 0;
    double prompt_seconds = 0.0;
    double generate_seconds = 0.0;
    int32_t queued = 0;             // waiting now
    int32_t running = 0;            // 0 or 1
    double device_active_share = 0.0;  // sparse models: share of active FFN neurons computed on the device
    uint64_t device_used_bytes = 0;
    uint64_t device_budget_bytes = 0;
};

class GenerationQueue {
public:
    static Result<std::unique_ptr<GenerationQueue>> create(std::shared_ptr<const Model> model, const SessionParams& params);
    ~GenerationQueue();

    std::shared_ptr<Stream> submit(Job job);
    // The client went away: the job is dropped if still queued, stopped at the next token (or
    // prompt batch) if running.
    void cancel(const std::shared_ptr<Stream>& stream);
    // Every request queued or running, as if their clients had gone (the model is being replaced).
    void cancel_all();

    const Model& model() const { return *model_; }
    int32_t n_ctx() const { return n_ctx_; }
    float activation_sparsity() const { return activation_sparsity_; }  // the session's level; 0: off
    QueueCounters counters() const;

private:
    GenerationQueue(std::shared_ptr<const Model> model, std::unique_ptr<Session> session);
    void work();
    void cancel_locked(Stream& stream);
    Outcome run(const Job& job, Stream& stream);
    void record(const Outcome& outcome);

    std::shared_ptr<const Model> model_;
    std::unique_ptr<Session> session_;  // the worker's alone
    int32_t n_ctx_ = 0;
    float activation_sparsity_ = 0.0f;
    std::vector<int32_t> context_;      // the tokens in the session's KV cache (worker only)

    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::pair<Job, std::shared_ptr<Stream>>> queue_;
    std::shared_ptr<Stream> running_;
    QueueCounters counters_;
    bool stopping_ = false;
    std::thread worker_;
};

}  // namespace ember::server
