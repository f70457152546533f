#pragma once
// What the split view shows for one generated token: per layer, the neurons the predictor marked
// active and where they ran, and the hot neurons resident on the device. Plain values, copied
// across threads by queued signals.

#include <QMetaType>
#include <QVector>

namespace ember::app {

struct LayerSplit {
    int n_ff = 0;
    int hot = 0;               // resident on the device
    int active = 0;            // predicted active for the token
    int active_on_device = 0;  // of which computed on the device
};

struct SplitSnapshot {
    QVector<LayerSplit> layers;
    double tokens_per_second = 0.0;
};

}  // namespace ember::app

Q_DECLARE_METATYPE(ember::app::SplitSnapshot)
