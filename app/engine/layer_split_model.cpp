#include "app/engine/layer_split_model.h"

namespace ember::app {

int LayerSplitModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(layers_.size()); }

QVariant LayerSplitModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const LayerSplit& l = layers_[index.row()];
    switch (role) {
        case NeuronsRole: return l.n_ff;
        case HotRole: return l.hot;
        case ActiveRole: return l.active;
        case ActiveOnDeviceRole: return l.active_on_device;
        case Qt::DisplayRole: return QStringLiteral("layer %1").arg(index.row());
        default: return {};
    }
}

QHash<int, QByteArray> LayerSplitModel::roleNames() const {
    return {{NeuronsRole, "neurons"}, {HotRole, "hot"}, {ActiveRole, "active"}, {ActiveOnDeviceRole, "activeOnDevice"},
            {Qt::DisplayRole, "display"}};
}

void LayerSplitModel::update(const SplitSnapshot& snapshot) {
    if (snapshot.layers.size() != layers_.size()) {
        beginResetModel();
        layers_ = snapshot.layers;
        endResetModel();
        return;
    }
    layers_ = snapshot.layers;
    if (!layers_.isEmpty()) emit dataChanged(index(0), index(int(layers_.size()) - 1));
}

}  // namespace ember::app
