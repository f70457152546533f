#include "app/hub/library_model.h"

#include "app/hub/library_scan.h"

namespace ember::app {
namespace {

bool same_data(const LibraryEntry& a, const LibraryEntry& b) {
    return a.bytes == b.bytes && a.sparse == b.sparse && a.quantization == b.quantization && a.folder == b.folder;
}

}  // namespace

int LibraryModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(entries_.size()); }

QVariant LibraryModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const LibraryEntry& e = entries_[size_t(index.row())];
    switch (role) {
        case RepoRole: return e.repo;
        case Qt::DisplayRole:
        case FileRole: return e.file;
        case PathRole: return e.path;
        case SizeRole: return double(e.bytes);
        case SparseRole: return e.sparse;
        case QuantizationRole: return e.quantization;
        case FolderRole: return e.folder;
        case FitRole: return e.fit;
        case FitTextRole: return e.fit_text;
        default: return {};
    }
}

QHash<int, QByteArray> LibraryModel::roleNames() const {
    return {{RepoRole, "repo"},     {FileRole, "file"},     {PathRole, "path"},
            {SizeRole, "size"},     {SparseRole, "sparse"}, {QuantizationRole, "quantization"},
            {FolderRole, "folder"}, {FitRole, "fit"},       {FitTextRole, "fitText"}};
}

void LibraryModel::merge(std::vector<LibraryEntry> entries) {
    // Both lists are sorted: walk them together like a merge.
    size_t row = 0, next = 0;
    while (row < entries_.size() || next < entries.size()) {
        if (next == entries.size() || (row < entries_.size() && library_order(entries_[row], entries[next]))) {
            beginRemoveRows({}, int(row), int(row));
            entries_.erase(entries_.begin() + std::ptrdiff_t(row));
            endRemoveRows();
        } else if (row == entries_.size() || library_order(entries[next], entries_[row])) {
            beginInsertRows({}, int(row), int(row));
            entries_.insert(entries_.begin() + std::ptrdiff_t(row), std::move(entries[next]));
            endInsertRows();
            ++row, ++next;
        } else {
            if (!same_data(entries_[row], entries[next])) {
                // The fit stays until the next refresh works it out for the new file.
                entries[next].fit = entries_[row].fit;
                entries[next].fit_text = entries_[row].fit_text;
                entries_[row] = std::move(entries[next]);
                emit dataChanged(index(int(row)), index(int(row)));
            }
            ++row, ++next;
        }
    }
}

void LibraryModel::set_fit(int row, const QString& fit, const QString& text) {
    LibraryEntry& e = entries_[size_t(row)];
    if (e.fit == fit && e.fit_text == text) return;
    e.fit = fit;
    e.fit_text = text;
    emit dataChanged(index(row), index(row), {FitRole, FitTextRole});
}

}  // namespace ember::app
