// The part of OsFile every system shares: moving and closing on destruction. The rest is in
// os_file_posix.cpp and os_file_windows.cpp.
#include "os_file.h"

#include <utility>

namespace ember::hub {

OsFile::OsFile(OsFile&& other) noexcept : handle_(std::exchange(other.handle_, kClosed)) {}

OsFile& OsFile::operator=(OsFile&& other) noexcept {
    if (this != &other) {
        close();
        handle_ = std::exchange(other.handle_, kClosed);
    }
    return *this;
}

OsFile::~OsFile() { close(); }

}  // namespace ember::hub
