#include "app/scene_graph_backend.h"

#include <QGuiApplication>
#include <QOffscreenSurface>
#include <QOpenGLContext>
#include <QOpenGLFunctions>
#include <QQuickWindow>

namespace ember::app {

SceneGraphChoice choose_scene_graph_backend() {
    SceneGraphChoice choice;
#if defined(Q_OS_LINUX)
    if (qEnvironmentVariableIsSet("QT_QUICK_BACKEND") || qEnvironmentVariableIsSet("QSG_RHI_BACKEND")) return choice;
    const QString platform = QGuiApplication::platformName();
    if (platform != QLatin1String("xcb") && !platform.startsWith(QLatin1String("wayland"))) return choice;
    QOffscreenSurface surface;
    surface.create();
    QOpenGLContext context;
    if (!context.create() || !context.makeCurrent(&surface)) return choice;
    choice.gl_renderer = QString::fromLatin1(reinterpret_cast<const char*>(context.functions()->glGetString(GL_RENDERER)));
    context.doneCurrent();
    for (const char* rasteriser : {"llvmpipe", "softpipe", "swrast"})
        choice.software = choice.software || choice.gl_renderer.contains(QLatin1String(rasteriser), Qt::CaseInsensitive);
    if (choice.software) QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
#endif
    return choice;
}

}  // namespace ember::app
