#pragma once
// One row per layer for the split view: hot neurons on the device, and for the latest token the
// active neurons and where they ran. Rows are updated in place (dataChanged), never reset,
// except when a model with another layer count is loaded.

#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>

#include "app/engine/split_snapshot.h"

namespace ember::app {

class LayerSplitModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by EngineController")

public:
    enum Role { NeuronsRole = Qt::UserRole + 1, HotRole, ActiveRole, ActiveOnDeviceRole };
    Q_ENUM(Role)

    using QAbstractListModel::QAbstractListModel;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    void update(const SplitSnapshot& snapshot);
    // A re-plan moved neurons: each layer's resident count now, the last token's activity kept
    // (none before the first token).
    void set_hot(const QVector<int>& hot_per_layer, int layer_neurons);

private:
    QVector<LayerSplit> layers_;
};

}  // namespace ember::app
