#include "part_file.h"

#include <system_error>
#include <utility>

namespace ember::hub {

namespace {

// Start writeback every this many bytes, so the sync before the rename finds little left to do
// and a multi-GB download never piles up gigabytes of dirty pages.
constexpr uint64_t writeback_bytes = 32u << 20;

Error os_error(const std::string& what, const std::filesystem::path& path, const OsError& e) {
    return Error{what + " " + path.string() + ": " + e.text};
}

}  // namespace

Result<PartFile> PartFile::open(const std::filesystem::path& path) {
    auto opened = OsFile::open(path, OsFile::Access::ExclusiveWrite);
    if (auto* e = std::get_if<OsError>(&opened)) {
        // A second downloader (the app and ember-hub at once) must not interleave into one file.
        if (e->in_use) return Error{path.string() + " is being downloaded by another process"};
        return os_error("cannot open", path, *e);
    }
    OsFile file = std::move(std::get<OsFile>(opened));
    const auto size = file.size();
    if (auto* e = std::get_if<OsError>(&size)) return os_error("cannot stat", path, *e);
    return PartFile(path, std::move(file), std::get<uint64_t>(size));
}

PartFile::PartFile(std::filesystem::path path, OsFile file, uint64_t size)
    : path_(std::move(path)), file_(std::move(file)), size_(size), written_back_(size) {}

bool PartFile::append(const char* data, size_t n) {
    if (auto e = file_.write_at(data, n, size_)) {
        // What did land before the error stays counted on the next open, from the file's size.
        write_error_ = std::move(*e);
        return false;
    }
    size_ += n;
    if (size_ - written_back_ >= writeback_bytes) {
        file_.start_writeback(written_back_, size_ - written_back_);
        written_back_ = size_;
    }
    return true;
}

Error PartFile::write_error() const {
    if (write_error_.disk_full) return Error{"disk full writing " + path_.string() + " (" + write_error_.text + ")"};
    return os_error("cannot write", path_, write_error_);
}

Status PartFile::truncate() {
    if (auto e = file_.truncate()) return os_error("cannot truncate", path_, *e);
    size_ = 0;
    written_back_ = 0;
    return Ok{};
}

Status PartFile::commit(const std::filesystem::path& final_path) {
    if (auto e = file_.sync()) return os_error("cannot sync", path_, *e);
    // Closed first: Windows renames no file its writer still holds.
    file_.close();
    if (auto e = replace_file(path_, final_path)) {
        return Error{"cannot rename " + path_.string() + " to " + final_path.string() + ": " + e->text};
    }
    if (auto e = sync_folder(final_path.parent_path())) return os_error("cannot sync folder", final_path.parent_path(), *e);
    return Ok{};
}

void PartFile::remove() {
    file_.close();
    std::error_code ec;
    std::filesystem::remove(path_, ec);
    size_ = 0;
    written_back_ = 0;
}

}  // namespace ember::hub
