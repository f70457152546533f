#pragma once
// A model file travels with its PowerInfer statistics (the activation/ folder beside it).

#include <QString>

namespace ember::app {

// Copies the model and its activation/ folder, if any, into dir; returns the copy's path, or
// an empty string when the model could not be copied.
QString copy_model_with_statistics(const QString& model, const QString& dir);

}  // namespace ember::app
