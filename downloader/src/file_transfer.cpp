#include "file_transfer.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "hub_errors.h"
#include "path_safety.h"
#include "url.h"

namespace ember::hub {

namespace fs = std::filesystem;

namespace {

// Larger reads than curl's 16 KiB default: fewer write calls per GiB.
constexpr long receive_buffer_bytes = 512 * 1024;

bool retryable(CURLcode code) {
    switch (code) {
        case CURLE_UNSUPPORTED_PROTOCOL:  // a redirect to plain http, refused on purpose
        case CURLE_URL_MALFORMAT:
        case CURLE_TOO_MANY_REDIRECTS:
        case CURLE_NOT_BUILT_IN:
        case CURLE_PEER_FAILED_VERIFICATION:
            return false;
        default:
            return true;
    }
}

// "bytes 100-199/200" → 100.
std::optional<uint64_t> range_start(const std::string& content_range) {
    const char* p = content_range.c_str();
    if (std::strncmp(p, "bytes ", 6) != 0) return std::nullopt;
    p += 6;
    if (!std::isdigit(static_cast<unsigned char>(*p))) return std::nullopt;
    return std::strtoull(p, nullptr, 10);
}

}  // namespace

FileTransfer::FileTransfer(const TransferContext& ctx, FileEntry entry, fs::path final_path, std::string resolve_url)
    : ctx_(ctx),
      entry_(std::move(entry)),
      final_path_(std::move(final_path)),
      part_path_(final_path_.string() + ".part"),
      resolve_url_(std::move(resolve_url)),
      current_url_(resolve_url_) {}

FileTransfer::~FileTransfer() { release(); }

std::string FileTransfer::expected_digest() const { return entry_.is_lfs() ? entry_.lfs_sha256 : entry_.oid; }

void FileTransfer::release() {
    if (stream_) ctx_.hasher.close(stream_);
    stream_.reset();
    if (part_) bytes_kept_ = part_->size();
    part_.reset();
    easy_.reset();
    headers_out_.reset();
}

void FileTransfer::fail(const std::string& message) { fail(Error{message}); }

void FileTransfer::fail(Error error) {
    release();
    note_ = error.message;
    failure_ = std::move(error);
    state_ = FileState::Failed;
}

void FileTransfer::cancel() {
    release();
    state_ = FileState::Cancelled;
}

void FileTransfer::retry(const std::string& reason, bool at_once) {
    ++failures_;
    if (failures_ >= ctx_.options.max_attempts) {
        fail("giving up on " + entry_.path + " after " + std::to_string(failures_) + " attempts: " + reason);
        return;
    }
    auto delay = std::min(ctx_.options.retry_delay * (1 << std::min(failures_ - 1, 16)), ctx_.options.max_retry_delay);
    retry_at_ = Clock::now() + (at_once ? Clock::duration::zero() : Clock::duration(delay));
    note_ = reason;
    state_ = FileState::Waiting;
}

void FileTransfer::integrity_failure(const std::string& reason) {
    if (part_) part_->remove();
    release();
    bytes_kept_ = 0;
    current_url_ = resolve_url_;
    if (mismatch_retried_) {
        fail(reason);
        return;
    }
    mismatch_retried_ = true;
    note_ = reason + "; downloading it again";
    retry_at_ = Clock::now();
    state_ = FileState::Waiting;
}

bool FileTransfer::open_part() {
    std::error_code ec;
    fs::create_directories(final_path_.parent_path(), ec);
    if (ec) {
        fail("cannot create " + final_path_.parent_path().string() + ": " + ec.message());
        return false;
    }
    if (auto inside = check_inside(ctx_.repo_dir, part_path_); !inside) {
        fail(inside.error().message);
        return false;
    }
    auto part = PartFile::open(part_path_);
    if (!part) {
        fail(part.error().message);
        return false;
    }
    if (part->size() > entry_.size) {
        if (auto t = part->truncate(); !t) {
            fail(t.error().message);
            return false;
        }
    }
    auto kind = entry_.is_lfs() ? DigestKind::Sha256 : DigestKind::GitBlobSha1;
    auto stream = ctx_.hasher.open(part_path_, kind, entry_.size);
    if (!stream) {
        fail(stream.error().message);
        return false;
    }
    stream_ = std::move(*stream);
    ctx_.hasher.advance(*stream_, part->size());  // a resumed prefix is hashed while the rest arrives
    part_ = std::move(*part);
    return true;
}

CURL* FileTransfer::start() {
    if (!part_) {
        std::error_code ec;
        if (fs::exists(fs::symlink_status(final_path_))) {
            // Already there: keep it only if it is this very file; never overwrite a different one.
            if (auto inside = check_inside(ctx_.repo_dir, final_path_); !inside) {
                fail(inside.error().message);
                return nullptr;
            }
            uint64_t have = fs::file_size(final_path_, ec);
            if (ec || have != entry_.size) {
                fail("refusing to overwrite " + final_path_.string() + ": it has " + std::to_string(have) +
                     " bytes, the Hub's " + entry_.path + " has " + std::to_string(entry_.size));
                return nullptr;
            }
            auto kind = entry_.is_lfs() ? DigestKind::Sha256 : DigestKind::GitBlobSha1;
            auto stream = ctx_.hasher.open(final_path_, kind, entry_.size);
            if (!stream) {
                fail(stream.error().message);
                return nullptr;
            }
            stream_ = std::move(*stream);
            checking_existing_ = true;
            ctx_.hasher.advance(*stream_, entry_.size);
            ctx_.hasher.finish(*stream_);
            state_ = FileState::Verifying;
            return nullptr;
        }
        if (!open_part()) return nullptr;
    }
    if (part_->size() == entry_.size) {
        ctx_.hasher.finish(*stream_);
        state_ = FileState::Verifying;
        return nullptr;
    }

    easy_ = new_easy(ctx_.settings);
    if (!easy_) {
        fail("cannot create a libcurl handle for " + entry_.path);
        return nullptr;
    }
    CURL* e = easy_.get();
    // The token goes to the endpoint only; a cached CDN URL is signed already.
    headers_out_ = url::origin(current_url_) == url::origin(ctx_.settings.endpoint) ? auth_headers(ctx_.settings) : nullptr;
    curl_easy_setopt(e, CURLOPT_URL, current_url_.c_str());
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers_out_.get());
    // A plain Range header rather than CURLOPT_RESUME_FROM_LARGE: with the latter libcurl fails
    // the transfer itself on any answer but 206, and we want to see a 200 (start over) or a
    // 403/410 (an expired signed URL) as such.
    const std::string range = std::to_string(part_->size()) + "-";
    curl_easy_setopt(e, CURLOPT_RANGE, part_->size() > 0 ? range.c_str() : nullptr);
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, receive_buffer_bytes);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &FileTransfer::on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, this);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &FileTransfer::on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, this);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf_);
    curl_easy_setopt(e, CURLOPT_PRIVATE, this);
    errbuf_[0] = 0;
    status_ = 0;
    headers_.clear();
    body_started_ = write_failed_ = overflow_ = bad_range_ = false;
    restart_error_.clear();
    attempt_start_ = part_->size();
    state_ = FileState::Downloading;
    return e;
}

size_t FileTransfer::on_header(char* data, size_t, size_t n, void* self) {
    return static_cast<FileTransfer*>(self)->header(data, n);
}

size_t FileTransfer::on_body(char* data, size_t, size_t n, void* self) {
    return static_cast<FileTransfer*>(self)->body(data, n);
}

size_t FileTransfer::header(const char* data, size_t n) {
    std::string line(data, n);
    if (line.rfind("HTTP/", 0) == 0) {  // each response of a redirect chain starts afresh
        size_t sp = line.find(' ');
        status_ = sp == std::string::npos ? 0 : std::strtol(line.c_str() + sp + 1, nullptr, 10);
        headers_.clear();
        body_started_ = false;
        return n;
    }
    size_t colon = line.find(':');
    if (colon == std::string::npos) return n;
    std::string name = line.substr(0, colon);
    for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
    size_t b = line.find_first_not_of(" \t", colon + 1);
    size_t e = line.find_last_not_of(" \t\r\n");
    headers_[name] = b == std::string::npos || e < b ? std::string() : line.substr(b, e - b + 1);
    return n;
}

size_t FileTransfer::body(const char* data, size_t n) {
    const bool content = status_ == 200 || status_ == 206;
    if (!body_started_) {
        body_started_ = true;
        if (status_ == 206) {
            auto start = range_start(headers_["content-range"]);
            if (!start || *start != part_->size()) {
                bad_range_ = true;
                return 0;
            }
        } else if (status_ == 200 && part_->size() > 0) {
            // The server ignored Range and sends the whole file: start over, never append.
            if (!start_over()) return 0;
        }
        if (content) {
            char* effective = nullptr;
            curl_easy_getinfo(easy_.get(), CURLINFO_EFFECTIVE_URL, &effective);
            if (effective) current_url_ = effective;
        }
    }
    if (!content) return n;  // an error page: its status and headers say what happened
    if (part_->size() + n > entry_.size) {
        overflow_ = true;
        return 0;
    }
    if (!part_->append(data, n)) {
        write_failed_ = true;
        return 0;
    }
    ctx_.hasher.advance(*stream_, part_->size());
    return n;
}

bool FileTransfer::start_over() {
    ctx_.hasher.restart(*stream_, [&] {
        if (auto t = part_->truncate(); !t) restart_error_ = t.error().message;
    });
    return restart_error_.empty();
}

void FileTransfer::finished(CURLcode code) {
    const bool token_sent = headers_out_ != nullptr;
    easy_.reset();
    headers_out_.reset();
    if (part_->size() > attempt_start_) failures_ = 0;
    const std::string where = entry_.path + " (" + current_url_ + ")";

    if (!restart_error_.empty()) return fail(restart_error_);
    if (write_failed_) return fail(part_->write_error().message);
    if (overflow_) {
        return integrity_failure("the server sent more than the Hub's " + std::to_string(entry_.size) + " bytes of " + where);
    }
    if (bad_range_) {
        if (!start_over()) return fail(restart_error_);
        return retry("the server answered a different range than asked for " + where, true);
    }
    if (code == CURLE_OK && (status_ == 200 || status_ == 206)) {
        if (part_->size() == entry_.size) {
            ctx_.hasher.finish(*stream_);
            state_ = FileState::Verifying;
            return;
        }
        return retry("connection closed at byte " + std::to_string(part_->size()) + " of " + std::to_string(entry_.size) + " of " + where);
    }
    if (code == CURLE_OK) {
        if ((status_ == 403 || status_ == 410) && current_url_ != resolve_url_) {
            current_url_ = resolve_url_;
            return retry("signed URL expired (HTTP " + std::to_string(status_) + "); resolving " + entry_.path + " again", true);
        }
        if (status_ == 416) {
            if (!start_over()) return fail(restart_error_);
            return retry("HTTP 416 for the rest of " + where + "; starting it over", true);
        }
        if (status_ == 408 || status_ == 429 || status_ >= 500) {
            return retry("HTTP " + std::to_string(status_) + " for " + where);
        }
        return fail(hub_error(ctx_.repo, current_url_, status_, headers_, token_sent));
    }
    std::string why = errbuf_[0] ? errbuf_ : curl_easy_strerror(code);
    if (code == CURLE_OPERATION_TIMEDOUT) why = "stalled: " + why;
    if (!retryable(code)) return fail(where + ": " + why);
    retry(where + ": " + why);
}

void FileTransfer::poll_digest() {
    if (state_ != FileState::Verifying) return;
    auto digest = ctx_.hasher.result(*stream_);
    if (!digest) return;
    if (!*digest) return fail(digest->error().message);
    const std::string expected = expected_digest();
    const char* algo = entry_.is_lfs() ? "sha256" : "git blob sha1";
    if (checking_existing_) {
        if (**digest == expected) {
            release();
            state_ = FileState::Done;
            return;
        }
        return fail("refusing to overwrite " + final_path_.string() + ": its " + algo + " is " + **digest +
                    ", the Hub's " + entry_.path + " has " + expected);
    }
    if (**digest != expected) {
        return integrity_failure(std::string(algo) + " mismatch for " + part_path_.string() + ": expected " + expected +
                                 ", got " + **digest);
    }
    if (auto committed = part_->commit(final_path_); !committed) return fail(committed.error().message);
    release();
    note_.clear();
    state_ = FileState::Done;
}

FileProgress FileTransfer::progress(Clock::time_point now) {
    FileProgress p;
    p.path = entry_.path;
    p.state = state_;
    p.bytes_total = entry_.size;
    p.bytes_done = state_ == FileState::Done ? entry_.size : part_ ? part_->size() : bytes_kept_;
    p.note = note_;
    if (state_ != FileState::Downloading) {
        bytes_per_second_ = 0;
        sample_at_ = {};
    } else if (sample_at_ == Clock::time_point{}) {
        sample_at_ = now;
        sample_bytes_ = p.bytes_done;
    } else if (double dt = std::chrono::duration<double>(now - sample_at_).count(); dt >= 0.5) {
        double instant = double(p.bytes_done >= sample_bytes_ ? p.bytes_done - sample_bytes_ : 0) / dt;
        bytes_per_second_ = bytes_per_second_ == 0 ? instant : 0.6 * bytes_per_second_ + 0.4 * instant;
        sample_at_ = now;
        sample_bytes_ = p.bytes_done;
    }
    p.bytes_per_second = bytes_per_second_;
    return p;
}

}  // namespace ember::hub
