#include "ember/hub/downloader.h"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "curl_handles.h"
#include "ember/hub/client.h"
#include "file_transfer.h"
#include "hasher.h"
#include "path_safety.h"
#include "url.h"

namespace ember::hub {

namespace fs = std::filesystem;

const char* to_string(FileState state) {
    switch (state) {
        case FileState::Queued: return "queued";
        case FileState::Downloading: return "downloading";
        case FileState::Waiting: return "waiting";
        case FileState::Verifying: return "verifying";
        case FileState::Done: return "done";
        case FileState::Failed: return "failed";
        case FileState::Cancelled: return "cancelled";
    }
    return "?";
}

const char* to_string(JobState state) {
    switch (state) {
        case JobState::Running: return "running";
        case JobState::Done: return "done";
        case JobState::Failed: return "failed";
        case JobState::Cancelled: return "cancelled";
    }
    return "?";
}

namespace {

struct RunningJob {
    JobId id = 0;
    ProgressFn on_progress;
    std::unique_ptr<TransferContext> ctx;
    std::vector<std::unique_ptr<FileTransfer>> files;
    JobState state = JobState::Running;
    Error error;
    std::vector<FileState> emitted_states;
    Clock::time_point emitted_at{};
};

bool active(FileState s) { return s == FileState::Downloading; }

// Free bytes on the file system that will hold `dir` (its nearest existing ancestor).
std::optional<uint64_t> free_bytes(fs::path dir) {
    std::error_code ec;
    dir = fs::absolute(dir, ec);
    while (!dir.empty() && !fs::exists(dir, ec)) {
        if (dir == dir.parent_path()) break;
        dir = dir.parent_path();
    }
    const fs::space_info space = fs::space(dir, ec);
    if (ec) return std::nullopt;
    return uint64_t(space.available);
}

std::string mib(uint64_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB"; }

}  // namespace

struct Downloader::Impl {
    Settings settings;
    DownloadOptions options;
    MultiHandle multi;  // before the hasher, whose thread wakes it
    Hasher hasher;

    std::mutex mu;
    std::condition_variable ended_cv;
    std::vector<std::unique_ptr<RunningJob>> incoming;
    std::vector<JobId> cancels;
    std::map<JobId, JobProgress> ended;  // kept, so wait() may be called more than once
    JobId next_id = 1;
    bool stopping = false;

    std::vector<std::unique_ptr<RunningJob>> jobs;  // the download thread's own
    std::thread thread;

    Impl(Settings s, DownloadOptions o)
        : settings(std::move(s)),
          options(o),
          multi((curl_init_once(), curl_multi_init())),
          hasher([this] { curl_multi_wakeup(multi.get()); }) {
        thread = std::thread([this] { run(); });
    }

    ~Impl() {
        {
            std::lock_guard lock(mu);
            stopping = true;
        }
        curl_multi_wakeup(multi.get());
        thread.join();
    }

    void run();
    void schedule(Clock::time_point now);
    void settle(RunningJob& job);
    void stop_files(RunningJob& job);
    JobProgress snapshot(RunningJob& job, Clock::time_point now);
    void emit(RunningJob& job, Clock::time_point now, bool force);
};

void Downloader::Impl::stop_files(RunningJob& job) {
    for (auto& f : job.files) {
        if (active(f->state())) curl_multi_remove_handle(multi.get(), f->easy());
        if (f->state() != FileState::Done && f->state() != FileState::Failed) f->cancel();
    }
}

void Downloader::Impl::schedule(Clock::time_point now) {
    int n_active = 0;
    for (auto& job : jobs) {
        for (auto& f : job->files) n_active += active(f->state());
    }
    for (auto& job : jobs) {
        for (auto& f : job->files) {
            if (n_active >= options.n_parallel) return;
            bool due = f->state() == FileState::Queued || (f->state() == FileState::Waiting && f->retry_at() <= now);
            if (!due) continue;
            if (CURL* e = f->start()) {
                curl_multi_add_handle(multi.get(), e);
                ++n_active;
            }
        }
    }
}

// One failed file fails the job (the others stop, keeping their .part files); all done is done.
void Downloader::Impl::settle(RunningJob& job) {
    if (job.state != JobState::Running) return;
    bool all_done = true;
    for (auto& f : job.files) {
        if (f->state() == FileState::Failed) {
            job.error = f->failure();
            job.state = JobState::Failed;
            stop_files(job);
            return;
        }
        all_done = all_done && f->state() == FileState::Done;
    }
    if (all_done) job.state = JobState::Done;
}

JobProgress Downloader::Impl::snapshot(RunningJob& job, Clock::time_point now) {
    JobProgress p;
    p.id = job.id;
    p.state = job.state;
    p.error = job.error.message;
    p.error_kind = job.error.kind;
    p.error_subject = job.error.subject;
    for (auto& f : job.files) {
        p.files.push_back(f->progress(now));
        p.bytes_done += p.files.back().bytes_done;
        p.bytes_total += p.files.back().bytes_total;
        p.bytes_per_second += p.files.back().bytes_per_second;
    }
    if (p.bytes_per_second > 0) p.eta_seconds = double(p.bytes_total - p.bytes_done) / p.bytes_per_second;
    if (p.state == JobState::Done) p.eta_seconds = 0;
    return p;
}

void Downloader::Impl::emit(RunningJob& job, Clock::time_point now, bool force) {
    std::vector<FileState> states;
    for (auto& f : job.files) states.push_back(f->state());
    if (!force && states == job.emitted_states && now - job.emitted_at < options.progress_interval) return;
    job.emitted_states = std::move(states);
    job.emitted_at = now;
    JobProgress p = snapshot(job, now);
    if (job.on_progress) job.on_progress(p);
    if (job.state != JobState::Running) {
        std::lock_guard lock(mu);
        ended[job.id] = std::move(p);
    }
}

void Downloader::Impl::run() {
    for (;;) {
        bool stop;
        std::vector<JobId> cancelled;
        {
            std::lock_guard lock(mu);
            for (auto& j : incoming) jobs.push_back(std::move(j));
            incoming.clear();
            cancelled.swap(cancels);
            stop = stopping;
        }
        for (auto& job : jobs) {
            bool cancel = stop || std::find(cancelled.begin(), cancelled.end(), job->id) != cancelled.end();
            if (cancel && job->state == JobState::Running) {
                stop_files(*job);
                job->state = JobState::Cancelled;
            }
        }

        auto now = Clock::now();
        schedule(now);
        int n_running = 0;
        curl_multi_perform(multi.get(), &n_running);
        int n_queued = 0;
        while (CURLMsg* msg = curl_multi_info_read(multi.get(), &n_queued)) {
            if (msg->msg != CURLMSG_DONE) continue;
            FileTransfer* f = nullptr;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &f);
            CURLcode code = msg->data.result;
            curl_multi_remove_handle(multi.get(), msg->easy_handle);
            f->finished(code);
        }
        for (auto& job : jobs) {
            for (auto& f : job->files) f->poll_digest();
            settle(*job);
        }

        now = Clock::now();
        for (auto& job : jobs) emit(*job, now, job->state != JobState::Running);
        size_t n_before = jobs.size();
        std::erase_if(jobs, [](const auto& j) { return j->state != JobState::Running; });
        if (jobs.size() != n_before) ended_cv.notify_all();
        if (stop) return;

        // Sleep until a socket is ready, a retry is due, progress is due, or someone wakes us.
        auto wake = now + options.progress_interval;
        for (auto& job : jobs) {
            for (auto& f : job->files) {
                if (f->state() == FileState::Waiting) wake = std::min(wake, f->retry_at());
            }
        }
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count();
        curl_multi_poll(multi.get(), nullptr, 0, int(std::max<int64_t>(ms, 0)), nullptr);
    }
}

Downloader::Downloader(Settings settings, DownloadOptions options)
    : impl_(std::make_unique<Impl>(std::move(settings), options)) {}

Downloader::~Downloader() = default;

void Downloader::set_token(std::string token) { impl_->settings.token = std::move(token); }

Result<JobId> Downloader::start(Job job, ProgressFn on_progress) {
    const Settings& settings = impl_->settings;
    if (auto ok = check_endpoint(settings.endpoint); !ok) return ok.error();
    if (auto ok = check_repo_id(job.repo); !ok) return ok.error();
    const std::string revision = job.revision.empty() ? "main" : job.revision;

    auto running = std::make_unique<RunningJob>();
    running->on_progress = std::move(on_progress);
    running->ctx = std::make_unique<TransferContext>(
        TransferContext{settings, impl_->options, impl_->hasher, job.repo, job.models_dir / fs::path(job.repo)});

    std::set<std::string> seen;
    uint64_t needed = 0;
    for (auto& entry : job.files) {
        auto dest = destination(job.models_dir, job.repo, entry.path);
        if (!dest) return dest.error();
        if (!seen.insert(entry.path).second) return Error{"file " + entry.path + " is listed twice in the job"};
        std::error_code ec;
        if (!fs::exists(*dest, ec)) {
            uint64_t have = fs::exists(dest->string() + ".part", ec) ? fs::file_size(dest->string() + ".part", ec) : 0;
            needed += entry.size > have ? entry.size - have : 0;
        }
        std::string resolve = settings.endpoint + "/" + job.repo + "/resolve/" + url::encode(revision, false) + "/" +
                              url::encode(entry.path, true);
        running->files.push_back(std::make_unique<FileTransfer>(*running->ctx, entry, *dest, std::move(resolve)));
    }
    if (auto free = free_bytes(job.models_dir); free && *free < needed) {
        return Error{"not enough disk space in " + job.models_dir.string() + ": the download needs " + mib(needed) +
                     ", " + mib(*free) + " free"};
    }

    JobId id;
    {
        std::lock_guard lock(impl_->mu);
        id = impl_->next_id++;
        running->id = id;
        impl_->incoming.push_back(std::move(running));
    }
    curl_multi_wakeup(impl_->multi.get());
    return id;
}

void Downloader::cancel(JobId id) {
    {
        std::lock_guard lock(impl_->mu);
        impl_->cancels.push_back(id);
    }
    curl_multi_wakeup(impl_->multi.get());
}

JobProgress Downloader::wait(JobId id) {
    std::unique_lock lock(impl_->mu);
    if (id == 0 || id >= impl_->next_id) {
        JobProgress unknown;
        unknown.id = id;
        unknown.state = JobState::Failed;
        unknown.error = "no download job " + std::to_string(id);
        return unknown;
    }
    impl_->ended_cv.wait(lock, [&] { return impl_->ended.count(id) != 0; });
    return impl_->ended[id];
}

}  // namespace ember::hub
