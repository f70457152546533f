#pragma once
// Qt Quick draws with OpenGL on Linux. Without a GPU that OpenGL is Mesa's software rasteriser
// (llvmpipe, softpipe), which repaints the whole window on the CPU for every frame, in threads of
// its own: while an answer streams it takes the cores the engine runs on. Qt Quick's software
// renderer repaints only what changed, a fraction of that (BENCHMARKS.md, "The app").

#include <QString>

namespace ember::app {

struct SceneGraphChoice {
    QString gl_renderer;  // what OpenGL said it is; empty when it was not asked
    bool software = false;  // Qt Quick's software renderer was chosen
};

// Asks OpenGL what renders it and, for a software rasteriser, has Qt Quick draw in software.
// Call after the QGuiApplication and before the first window. Leaves Qt's choice alone when the
// user made one (QT_QUICK_BACKEND, QSG_RHI_BACKEND) and on platforms without OpenGL windows
// (offscreen, minimal) or whose Qt Quick does not draw with OpenGL by default (Windows, macOS).
SceneGraphChoice choose_scene_graph_backend();

}  // namespace ember::app
