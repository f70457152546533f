#pragma once
// One Hub file on its way to disk: the .part file, the attempts (resume, redirects, re-resolving
// an expired signed URL, backoff), and the verification that decides whether it may take its
// final name. The Downloader's thread drives it; nothing here is shared with other threads
// except through the Hasher.

#include <curl/curl.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "curl_handles.h"
#include "ember/hub/downloader.h"
#include "hasher.h"
#include "part_file.h"

namespace ember::hub {

using Clock = std::chrono::steady_clock;

struct TransferContext {
    Settings settings;  // as they were when the job started
    const DownloadOptions& options;
    Hasher& hasher;
    std::string repo;
    std::filesystem::path repo_dir;
};

class FileTransfer {
public:
    FileTransfer(const TransferContext& ctx, FileEntry entry, std::filesystem::path final_path, std::string resolve_url);
    ~FileTransfer();

    FileState state() const { return state_; }
    Clock::time_point retry_at() const { return retry_at_; }
    const std::string& error() const { return note_; }
    const Error& failure() const { return failure_; }  // Failed: why, with the Hub's kind of refusal
    CURL* easy() const { return easy_.get(); }

    // Queued or Waiting → Downloading (returns the handle to add to the multi handle),
    // Verifying (nothing left to fetch), or Failed.
    CURL* start();
    // The multi handle finished (and no longer holds) this file's handle.
    void finished(CURLcode code);
    // Verifying → Done, Waiting (one more try after a mismatch) or Failed, once the digest is ready.
    void poll_digest();
    // Stops where it is; the .part file stays for a later resume. The caller removed the handle.
    void cancel();

    FileProgress progress(Clock::time_point now);

private:
    static size_t on_header(char* data, size_t, size_t n, void* self);
    static size_t on_body(char* data, size_t, size_t n, void* self);
    size_t header(const char* data, size_t n);
    size_t body(const char* data, size_t n);

    bool open_part();
    bool start_over();  // empties the .part file and its digest; false (restart_error_) if it cannot
    void retry(const std::string& reason, bool at_once = false);
    void integrity_failure(const std::string& reason);
    void fail(const std::string& message);
    void fail(Error error);
    void release();
    std::string expected_digest() const;

    const TransferContext& ctx_;
    FileEntry entry_;
    std::filesystem::path final_path_;
    std::filesystem::path part_path_;
    std::string resolve_url_;
    std::string current_url_;  // the resolve URL, or the CDN URL it led to (reused to resume)

    FileState state_ = FileState::Queued;
    std::string note_;
    Error failure_;
    Clock::time_point retry_at_{};
    int failures_ = 0;  // attempts in a row that brought no byte
    bool mismatch_retried_ = false;
    bool checking_existing_ = false;  // verifying a final file found on disk, not a download

    std::optional<PartFile> part_;
    uint64_t bytes_kept_ = 0;  // the .part's size when it was last closed: what a resume starts from
    std::shared_ptr<Hasher::Stream> stream_;

    // Per attempt.
    EasyHandle easy_;
    SlistHandle headers_out_;
    char errbuf_[CURL_ERROR_SIZE] = {};
    long status_ = 0;
    std::map<std::string, std::string> headers_;
    bool body_started_ = false;
    bool write_failed_ = false;
    bool overflow_ = false;
    bool bad_range_ = false;
    std::string restart_error_;
    uint64_t attempt_start_ = 0;

    // Speed, sampled by progress().
    Clock::time_point sample_at_{};
    uint64_t sample_bytes_ = 0;
    double bytes_per_second_ = 0;
};

}  // namespace ember::hub
