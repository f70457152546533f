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

void LayerSplitModel::set_hot(const QVector<int>& hot_per_layer, int layer_neurons) {
    if (hot_per_layer.size() != layers_.size()) {
        beginResetModel();
        layers_.clear();
        for (const int hot : hot_per_layer) layers_.push_back(LayerSplit{layer_neurons, hot, 0, 0});
        endResetModel();
        return;
    }
    for (qsizetype il = 0; il < layers_.size(); ++il) layers_[il].hot = hot_per_layer[il];
    if (!layers_.isEmpty()) emit dataChanged(index(0), index(int(layers_.size()) - 1), {HotRole});
}

}  // namespace ember::app
