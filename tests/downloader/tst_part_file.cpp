// The download's file layer (PartFile over OsFile) on a real file system: growing, the lock
// against a second writer, reading behind the writer, truncating, the durable rename (also over
// an older file and while the hasher still reads), removal, UTF-8 names. Plain C++ with no test
// framework, because the same program is built with MinGW-w64 and run under Wine
// (packaging/windows/mingw-engine-check.sh) to check the Windows half.
//
//   tst_part_file [DIR]     (default: a fresh folder under the system's temp folder)

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "ember/hub/glob.h"
#include "os_file.h"
#include "part_file.h"

using namespace ember::hub;
namespace fs = std::filesystem;

namespace {

int g_failures = 0;

void check(bool ok, const std::string& what) {
    std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
    if (!ok) ++g_failures;
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string read_all(const OsFile& f) {
    std::string out;
    char buf[4];  // small, so reads at several offsets are exercised
    for (;;) {
        const auto got = f.read_at(buf, sizeof buf, out.size());
        if (!std::holds_alternative<size_t>(got) || std::get<size_t>(got) == 0) return out;
        out.append(buf, std::get<size_t>(got));
    }
}

fs::path u8(const char8_t* s) { return fs::path(std::u8string(s)); }

}  // namespace

int main(int argc, char** argv) {
    std::random_device rd;
    const fs::path dir = argc > 1 ? fs::path(argv[1]) : fs::temp_directory_path() / ("ember-part-file-" + std::to_string(rd()));
    std::error_code ec;
    fs::create_directories(dir, ec);
    const fs::path part = dir / u8(u8"模型-é.gguf.part"), final_path = dir / u8(u8"模型-é.gguf");

    auto opened = PartFile::open(part);
    check(opened.ok(), "a new part file opens");
    if (!opened) return 1;
    PartFile file = std::move(*opened);
    check(file.size() == 0, "it starts empty");
    check(file.append("hello ", 6) && file.append("world", 5) && file.size() == 11, "appends grow it");

    auto second = PartFile::open(part);
    check(!second.ok() && second.error().message.find("another process") != std::string::npos,
          "a second writer is refused: " + (second.ok() ? std::string("opened") : second.error().message));

    auto reader_opened = OsFile::open(part, OsFile::Access::Read);
    check(std::holds_alternative<OsFile>(reader_opened), "a reader opens beside the writer");
    if (!std::holds_alternative<OsFile>(reader_opened)) return 1;
    OsFile reader = std::move(std::get<OsFile>(reader_opened));
    check(read_all(reader) == "hello world", "the reader sees what was appended");
    char c = 0;
    const auto past_end = reader.read_at(&c, 1, 1000);
    check(std::holds_alternative<size_t>(past_end) && std::get<size_t>(past_end) == 0, "a read past the end reads nothing");

    check(file.truncate().ok() && file.size() == 0 && fs::file_size(part) == 0, "truncate empties it");
    check(file.append("abc", 3) && read_all(reader) == "abc", "it grows again from the start");

    {
        std::ofstream(final_path, std::ios::binary) << "an older file";
    }
    const Status committed = file.commit(final_path);
    check(committed.ok(), "commit renames over an older file while a reader is open" +
                              (committed.ok() ? std::string() : ": " + committed.error().message));
    check(slurp(final_path) == "abc" && !fs::exists(part), "the final name holds the whole file, the part is gone");
    reader.close();

    auto again = PartFile::open(part);
    check(again.ok(), "the part name is free again after the commit");
    if (again) {
        check(again->append("xyz", 3), "a new part takes bytes");
        again->remove();
        check(!fs::exists(part), "remove deletes it");
    }

    {
        auto a = PartFile::open(part);
        check(a.ok() && a->append("12345", 5), "a part left behind");
    }
    auto resumed = PartFile::open(part);
    check(resumed.ok() && resumed->size() == 5, "reopening resumes at the size already on disk");
    if (resumed) resumed->remove();

    auto missing = OsFile::open(dir / "no such file", OsFile::Access::Read);
    check(std::holds_alternative<OsError>(missing) && !std::get<OsError>(missing).text.empty(),
          "opening a missing file gives the system's reason: " +
              (std::holds_alternative<OsError>(missing) ? std::get<OsError>(missing).text : std::string("opened")));

    const fs::path secret = dir / "token";
    auto created = OsFile::open(secret, OsFile::Access::CreatePrivate);
    check(std::holds_alternative<OsFile>(created), "a private file is created");
    if (auto* f = std::get_if<OsFile>(&created)) {
        check(!f->write_at("hf_x\n", 5, 0) && !f->sync(), "it is written and synced");
        f->close();
        check(slurp(secret) == "hf_x\n", "it holds what was written");
#if !defined(_WIN32)
        check((fs::status(secret).permissions() & (fs::perms::group_all | fs::perms::others_all)) == fs::perms::none,
              "only its owner may read it");
#endif
    }

    check(glob_match("activation/*", "activation/activation_3.pt") && !glob_match("*.gguf", "model.gguf.part"),
          "--include patterns match as on Linux");

    fs::remove_all(dir, ec);
    std::printf("%s\n", g_failures ? "FAILED" : "all passed");
    return g_failures ? 1 : 0;
}
