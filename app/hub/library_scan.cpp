#include "app/hub/library_scan.h"

#include <QCoreApplication>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>

#include <algorithm>

namespace ember::app {
namespace {

const QString part_suffix = QStringLiteral(".part");
const QString gpuidx_suffix = QStringLiteral(".generated.gpuidx");

// The repo folder's finished files, as the Hub would list them (relative '/' paths).
std::vector<hub::FileEntry> local_files(const QString& repo_dir) {
    std::vector<hub::FileEntry> files;
    QDirIterator it(repo_dir, QDir::Files, QDirIterator::Subdirectories);
    const QDir base(repo_dir);
    while (it.hasNext()) {
        const QFileInfo info(it.next());
        const QString name = info.fileName();
        if (name.endsWith(part_suffix) || name.endsWith(gpuidx_suffix)) continue;
        hub::FileEntry f;
        f.path = base.relativeFilePath(info.filePath()).toStdString();
        f.size = uint64_t(info.size());
        files.push_back(std::move(f));
    }
    return files;
}

void add_models(const QString& repo, const QString& repo_dir, std::vector<LibraryEntry>& out) {
    const hub::RepoLayout layout = hub::classify(local_files(repo_dir));
    for (const auto* models : {&layout.sparse_models, &layout.dense_models}) {
        for (const hub::ModelFile& m : *models) {
            auto plan = hub::plan_model_download(layout, m.entry.path);
            LibraryEntry e;
            e.repo = repo;
            e.file = QString::fromStdString(m.entry.path);
            e.path = repo_dir + QLatin1Char('/') + e.file;
            e.quantization = QString::fromStdString(m.quantization);
            e.sparse = models == &layout.sparse_models;
            e.bytes = plan ? plan->total_bytes : m.entry.size;
            if (auto read = ember::read_footprint(e.path.toStdString(), m.entry.size)) e.footprint = std::move(*read);
            else e.footprint_error = QString::fromStdString(read.error().message);
            out.push_back(std::move(e));
        }
    }
}

bool has_gguf(const QString& dir) {
    QDirIterator it(dir, {QStringLiteral("*.gguf")}, QDir::Files, QDirIterator::Subdirectories);
    return it.hasNext();
}

}  // namespace

std::vector<LibraryEntry> scan_library(const QString& models_dir, const QStringList& added_folders) {
    std::vector<LibraryEntry> out;
    for (const QString& folder : added_folders) {
        const size_t first = out.size();
        add_models(QDir(folder).dirName(), QDir(folder).absolutePath(), out);
        for (size_t i = first; i < out.size(); ++i) out[i].folder = folder;
    }
    const QDir root(models_dir);
    for (const QString& owner : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
        const QDir owner_dir(root.filePath(owner));
        for (const QString& name : owner_dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
            add_models(owner + QLatin1Char('/') + name, owner_dir.filePath(name), out);
    }
    std::sort(out.begin(), out.end(), library_order);
    return out;
}

bool library_order(const LibraryEntry& a, const LibraryEntry& b) {
    if (a.repo != b.repo) return a.repo < b.repo;
    return a.file != b.file ? a.file < b.file : a.path < b.path;  // two added folders may share a name
}

QString check_added_folder(const QString& models_dir, const QString& folder) {
    const QFileInfo info(folder);
    if (!info.isDir()) return QCoreApplication::translate("Library", "%1 is not a folder").arg(folder);
    if (!has_gguf(folder)) return QCoreApplication::translate("Library", "%1 holds no .gguf file").arg(folder);
    const QString root = QDir(models_dir).canonicalPath();
    const QString canonical = info.canonicalFilePath();
    if (!root.isEmpty() && (canonical == root || canonical.startsWith(root + QLatin1Char('/'))))
        return QCoreApplication::translate("Library", "%1 is already in the library").arg(folder);
    return {};
}

QString remove_model(const QString& models_dir, const QString& model_path) {
    const QString root = QDir(models_dir).canonicalPath();
    const QFileInfo model(model_path);
    const QString canonical = model.canonicalFilePath();
    // <root>/<owner>/<name>/<file…>: anything shallower or elsewhere is not a library model.
    const QString rel = root.isEmpty() || canonical.isEmpty() ? QString() : QDir(root).relativeFilePath(canonical);
    if (rel.isEmpty() || rel.startsWith(QStringLiteral("..")) || rel.count(QLatin1Char('/')) < 2)
        return QCoreApplication::translate("Library", "%1 is not a model in %2").arg(model_path, models_dir);
    if (!QFile::remove(canonical)) return QCoreApplication::translate("Library", "cannot delete %1").arg(canonical);
    QFile::remove(canonical + gpuidx_suffix);  // absent until the model was loaded once
    const QStringList parts = rel.split(QLatin1Char('/'));
    const QString owner_dir = root + QLatin1Char('/') + parts[0];
    const QString repo_dir = owner_dir + QLatin1Char('/') + parts[1];
    if (!has_gguf(repo_dir) && !QDir(repo_dir).removeRecursively())
        return QCoreApplication::translate("Library", "deleted %1 but not the rest of %2").arg(canonical, repo_dir);
    QDir(root).rmdir(parts[0]);  // only when empty: other repos of the owner stay
    return {};
}

}  // namespace ember::app
