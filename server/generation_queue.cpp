#include "server/generation_queue.h"

#include <algorithm>

#include "server/stop_strings.h"

namespace ember::server {
namespace {

Outcome cancelled_outcome() {
    Outcome o;
    o.finish_reason = "cancelled";
    return o;
}

}  // namespace

Stream::Taken Stream::take(std::chrono::milliseconds wait) {
    std::unique_lock lock(mutex_);
    ready_.wait_for(lock, wait, [&] { return !pieces_.empty() || finished_; });
    Taken t;
    t.pieces.swap(pieces_);
    t.finished = finished_;
    return t;
}

bool Stream::cancelled() const {
    std::lock_guard lock(mutex_);
    return cancelled_;
}

void Stream::push(const std::string& text) {
    if (text.empty()) return;
    {
        std::lock_guard lock(mutex_);
        pieces_.push_back(text);
    }
    ready_.notify_all();
}

void Stream::finish(Outcome outcome) {
    {
        std::lock_guard lock(mutex_);
        outcome_ = std::move(outcome);
        finished_ = true;
    }
    ready_.notify_all();
}

Result<std::unique_ptr<GenerationQueue>> GenerationQueue::create(std::shared_ptr<const Model> model,
                                                                 const SessionParams& params) {
    auto session = Session::create(model, params);
    if (!session) return session.error();
    return std::unique_ptr<GenerationQueue>(new GenerationQueue(std::move(model), std::move(*session)));
}

GenerationQueue::GenerationQueue(std::shared_ptr<const Model> model, std::unique_ptr<Session> session)
    : model_(std::move(model)),
      session_(std::move(session)),
      n_ctx_(session_->n_ctx()),
      activation_sparsity_(session_->activation_sparsity()) {
    const DeviceReport report = session_->device_report();
    counters_.device_used_bytes = report.used_bytes;
    counters_.device_budget_bytes = report.budget_bytes;
    worker_ = std::thread([this] { work(); });
}

GenerationQueue::~GenerationQueue() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        for (auto& [job, stream] : queue_) stream->finish(cancelled_outcome());
        queue_.clear();
        if (running_) cancel_locked(*running_);
    }
    wake_.notify_all();
    worker_.join();
}

std::shared_ptr<Stream> GenerationQueue::submit(Job job) {
    auto stream = std::make_shared<Stream>();
    {
        std::lock_guard lock(mutex_);
        if (stopping_) {
            stream->finish(cancelled_outcome());
            return stream;
        }
        queue_.emplace_back(std::move(job), stream);
        ++counters_.queued;
    }
    wake_.notify_one();
    return stream;
}

void GenerationQueue::cancel(const std::shared_ptr<Stream>& stream) {
    std::lock_guard lock(mutex_);
    cancel_locked(*stream);
}

void GenerationQueue::cancel_all() {
    std::lock_guard lock(mutex_);
    for (auto& [job, stream] : queue_) cancel_locked(*stream);
    if (running_) cancel_locked(*running_);
}

// The stream's flag stops generation at the next token; the session's flag stops a prompt
// being evaluated at the next batch.
void GenerationQueue::cancel_locked(Stream& stream) {
    {
        std::lock_guard stream_lock(stream.mutex_);
        stream.cancelled_ = true;
    }
    if (running_.get() == &stream) session_->cancel();
}

QueueCounters GenerationQueue::counters() const {
    std::lock_guard lock(mutex_);
    return counters_;
}

void GenerationQueue::work() {
    for (;;) {
        std::pair<Job, std::shared_ptr<Stream>> next;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
            if (stopping_) return;
            next = std::move(queue_.front());
            queue_.pop_front();
            --counters_.queued;
            if (next.second->cancelled()) {
                ++counters_.requests;
                ++counters_.cancelled;
                next.second->finish(cancelled_outcome());
                continue;
            }
            running_ = next.second;
            counters_.running = 1;
        }
        Outcome outcome;
        try {
            outcome = run(next.first, *next.second);
        } catch (const std::exception& e) {  // out of memory, say: this request fails, not the process
            context_.clear();
            session_->clear();
            outcome.finish_reason = "stop";
            outcome.error = Error{std::string("generation failed: ") + e.what()};
        }
        {
            std::lock_guard lock(mutex_);
            running_.reset();
            counters_.running = 0;
            record(outcome);
        }
        next.second->finish(std::move(outcome));
    }
}

Outcome GenerationQueue::run(const Job& job, Stream& stream) {
    Outcome out;
    out.prompt_tokens = int32_t(job.prompt.size());
    // Keep the prefix the prompt shares with the context; evaluate at least one token, so there
    // are logits to sample from.
    size_t keep = 0;
    while (keep < context_.size() && keep < job.prompt.size() && context_[keep] == job.prompt[keep]) ++keep;
    keep = std::min(keep, job.prompt.size() - 1);
    session_->truncate(int32_t(keep));
    context_.resize(keep);
    out.cached_tokens = int32_t(keep);
    const std::span<const int32_t> fresh(job.prompt.data() + keep, job.prompt.size() - keep);

    StopStrings stops(job.stop);
    // A cancel that came before the session's own flag was reset must not be lost to it.
    if (stream.cancelled()) {
        out.finish_reason = "cancelled";
        return out;
    }
    auto result = session_->generate(fresh, job.params, [&](const TokenEvent& ev) {
        stream.push(stops.feed(ev.text));
        return !stops.stopped() && !stream.cancelled();
    });
    stream.push(stops.flush());
    context_.insert(context_.end(), fresh.begin(), fresh.end());
    if (!result) {
        context_.clear();
        session_->clear();
        out.finish_reason = "stop";
        out.error = result.error();
        return out;
    }
    context_.insert(context_.end(), result->tokens.begin(), result->tokens.end());
    context_.resize(size_t(session_->n_past()));
    out.completion_tokens = int32_t(result->tokens.size());
    out.timings = session_->timings();
    if (stream.cancelled()) out.finish_reason = "cancelled";
    else if (stops.stopped() || result->stop_reason == StopReason::EndOfGeneration) out.finish_reason = "stop";
    else out.finish_reason = "length";
    return out;
}

void GenerationQueue::record(const Outcome& outcome) {
    QueueCounters& c = counters_;
    ++c.requests;
    if (outcome.finish_reason == "cancelled") ++c.cancelled;
    c.prompt_tokens += outcome.timings.n_prompt;
    c.cached_tokens += outcome.cached_tokens;
    c.generated_tokens += outcome.completion_tokens;
    c.prompt_seconds += outcome.timings.prompt_ms / 1000.0;
    c.generate_seconds += outcome.timings.generate_ms / 1000.0;
    int64_t active = 0, on_device = 0;
    for (const LayerSparsity& l : session_->layer_sparsity()) {
        active += l.active;
        on_device += l.active_on_device;
    }
    c.device_active_share = active > 0 ? double(on_device) / double(active) : 0.0;
    const DeviceReport report = session_->device_report();
    c.device_used_bytes = report.used_bytes;
    c.device_budget_bytes = report.budget_bytes;
}

}  // namespace ember::server
