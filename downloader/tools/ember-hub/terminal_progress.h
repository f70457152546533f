#pragma once
// Download progress for a terminal: one line redrawn in place on a TTY, plain lines (a file
// finished, a retry, a periodic total) when the output is a pipe or a log.

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "ember/hub/downloader.h"

namespace ember::hub::cli {

std::string human_bytes(uint64_t bytes);
bool stdout_is_terminal();

class TerminalProgress {
public:
    explicit TerminalProgress(bool tty) : tty_(tty) {}
    void update(const JobProgress& p);  // called on the download thread
    void finish();                      // ends the redrawn line

private:
    bool tty_;
    std::map<std::string, std::pair<FileState, std::string>> seen_;  // per file: last state and note
    std::chrono::steady_clock::time_point last_line_{};
    bool line_open_ = false;
};

}  // namespace ember::hub::cli
