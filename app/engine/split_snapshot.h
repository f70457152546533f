#pragma once
// What the split view shows after a batch of generated tokens: per layer, the neurons the
// predictor marked active for the latest token and where they ran, and the hot neurons resident on
// the device; and, for every token of the batch, the device's share of its active neurons. Plain
// values, copied across threads by queued signals.

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
    QVector<LayerSplit> layers;  // the latest token's
    double tokens_per_second = 0.0;
    QVector<double> token_shares;  // each token's since the previous snapshot, oldest first
    qint64 active = 0;             // active neurons of those tokens, all layers
    qint64 active_on_device = 0;   // of which computed on the device
};

}  // namespace ember::app

Q_DECLARE_METATYPE(ember::app::SplitSnapshot)
