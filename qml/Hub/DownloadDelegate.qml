import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

// One model download: total progress, speed and time left, each file's progress, the error
// when it failed, and Cancel, Resume or Retry.
Frame {
    id: job

    required property int index
    required property string repo
    required property string modelFile
    required property string jobState
    required property double bytesDone
    required property double bytesTotal
    required property double progress
    required property double speed
    required property double eta
    required property string error
    required property var files

    ColumnLayout {
        anchors.left: parent.left
        anchors.right: parent.right
        spacing: 4

        RowLayout {
            Layout.fillWidth: true

            Label {
                Layout.fillWidth: true
                text: qsTr("%1 — %2").arg(job.repo).arg(job.modelFile)
                elide: Text.ElideMiddle
                font.bold: true
            }
            Button {
                visible: job.jobState === "running"
                text: qsTr("Pause")
                Accessible.name: qsTr("Pause download of %1").arg(job.modelFile)
                onClicked: HubController.cancel(job.index)
            }
            Button {
                visible: job.jobState === "failed" || job.jobState === "cancelled"
                text: job.jobState === "failed" ? qsTr("Retry") : qsTr("Resume")
                Accessible.name: job.jobState === "failed" ? qsTr("Retry download of %1").arg(job.modelFile)
                                                           : qsTr("Resume download of %1").arg(job.modelFile)
                onClicked: HubController.retry(job.index)
            }
            Button {
                visible: job.jobState !== "running"
                text: job.jobState === "done" ? qsTr("Clear") : qsTr("Remove")
                ToolTip.visible: hovered
                ToolTip.text: job.jobState === "done" ? qsTr("Remove from this list (the model stays)")
                                                      : qsTr("Forget this download and delete its partial files")
                Accessible.name: qsTr("Remove download of %1").arg(job.modelFile)
                onClicked: HubController.removeDownload(job.index)
            }
        }
        ProgressBar {
            Layout.fillWidth: true
            value: job.progress
            Accessible.name: qsTr("Download progress")
        }
        Label {
            Layout.fillWidth: true
            text: job.jobState === "running"
                  ? qsTr("%1 of %2 · %3/s · %4 left").arg(HubController.formatBytes(job.bytesDone))
                    .arg(HubController.formatBytes(job.bytesTotal)).arg(HubController.formatBytes(job.speed))
                    .arg(HubController.formatDuration(job.eta))
                  : job.jobState === "done" ? qsTr("Done · %1").arg(HubController.formatBytes(job.bytesTotal))
                  : job.jobState === "cancelled" ? qsTr("Paused at %1 of %2").arg(HubController.formatBytes(job.bytesDone))
                    .arg(HubController.formatBytes(job.bytesTotal))
                  : qsTr("Failed")
            font.pointSize: 8
            color: Theme.mutedText
        }
        Label {
            Layout.fillWidth: true
            visible: job.error.length > 0
            text: job.error
            wrapMode: Text.Wrap
            color: Theme.error
        }
        Repeater {
            model: job.jobState === "done" ? [] : job.files
            delegate: DownloadFileRow {
                Layout.fillWidth: true
            }
        }
    }
}
