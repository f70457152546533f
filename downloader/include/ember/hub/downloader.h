#pragma once
// Resumable, verified downloads of Hub files. One thread owns a libcurl multi handle and runs
// every job; a second thread hashes each file from disk right behind its writer, so
// verification costs no extra pass. Files land in <models_dir>/<owner>/<name>/<hub path>.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/hub/repo.h"
#include "ember/hub/result.h"
#include "ember/hub/settings.h"

namespace ember::hub {

struct DownloadOptions {
    int n_parallel = 4;    // files on the wire at once, across all jobs
    int max_attempts = 6;  // failed attempts in a row, without a byte of progress, before giving up
    std::chrono::milliseconds retry_delay{1000};  // first backoff; doubles per failed attempt
    std::chrono::milliseconds max_retry_delay{30000};
    std::chrono::milliseconds progress_interval{200};
};

struct Job {
    std::string repo;      // "owner/name"
    std::string revision;  // pin to RepoInfo::sha so every file comes from one commit
    std::vector<FileEntry> files;
    std::filesystem::path models_dir;
};

using JobId = uint64_t;

enum class FileState { Queued, Downloading, Waiting, Verifying, Done, Failed, Cancelled };
enum class JobState { Running, Done, Failed, Cancelled };

const char* to_string(FileState state);
const char* to_string(JobState state);

struct FileProgress {
    std::string path;  // hub path
    FileState state = FileState::Queued;
    uint64_t bytes_done = 0;
    uint64_t bytes_total = 0;
    double bytes_per_second = 0;
    std::string note;  // why the file is waiting or failed, e.g. the last retry reason
};

struct JobProgress {
    JobId id = 0;
    JobState state = JobState::Running;
    uint64_t bytes_done = 0;
    uint64_t bytes_total = 0;
    double bytes_per_second = 0;
    double eta_seconds = -1;  // negative while unknown
    std::vector<FileProgress> files;
    std::string error;  // set when state is Failed: one line naming the file or URL
    ErrorKind error_kind = ErrorKind::Other;  // a refusal by the Hub, and which
    std::string error_subject;                // what it refused (Error::subject)
};

// Called on the download thread, at most every progress_interval and on every state change.
// Keep it short; hand the value to your own thread. It may call Downloader::cancel.
using ProgressFn = std::function<void(const JobProgress&)>;

class Downloader {
public:
    explicit Downloader(Settings settings, DownloadOptions options = {});
    ~Downloader();  // cancels running jobs (their .part files stay) and joins the threads
    Downloader(const Downloader&) = delete;
    Downloader& operator=(const Downloader&) = delete;

    // Checks the repo id, every path and the free space before anything is written.
    Result<JobId> start(Job job, ProgressFn on_progress = {});
    // Stops the job's transfers at once; .part files stay, so a later start resumes them.
    void cancel(JobId id);
    // Blocks until the job has ended and returns its last progress.
    JobProgress wait(JobId id);
    // The token for jobs started from now on (running ones keep theirs). Call it from the
    // thread that calls start().
    void set_token(std::string token);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace ember::hub
