pragma Singleton
import QtQuick

// The split view's colours, one set for the per-layer bars, the token strip and their legend.
QtObject {
    readonly property color hot: Qt.rgba(0.2, 0.45, 0.9, 0.35)     // resident on the device
    readonly property color cold: Qt.rgba(0.5, 0.5, 0.5, 0.25)     // left to the CPU
    readonly property color activeOnDevice: "#2f6fe0"
    readonly property color activeOnCpu: "#e08a2f"
}
