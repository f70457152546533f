#pragma once
// CPU time of this process's threads from /proc/self/task (Linux), grouped the way the frame
// probe reports them: the GUI thread, the engine's threads (the EngineWorker thread and the pool
// it starts, which inherit its name) and every other thread (Qt's renderer and Mesa's, QML's).

#include <QDir>
#include <QFile>
#include <QString>

#include <unistd.h>

namespace ember::app::probe {

struct ThreadCpu {
    double gui_s = 0, engine_s = 0, other_s = 0;
};

inline ThreadCpu thread_cpu(pid_t gui_tid) {
    ThreadCpu cpu;
    const double tick = double(::sysconf(_SC_CLK_TCK));
    for (const QString& task : QDir(QStringLiteral("/proc/self/task")).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        QFile f(QStringLiteral("/proc/self/task/%1/stat").arg(task));
        if (!f.open(QIODevice::ReadOnly)) continue;
        const QByteArray stat = f.readAll();
        // "tid (comm) state …": utime and stime are fields 14 and 15, the 12th and 13th after ")".
        const qsizetype open = stat.indexOf('('), close = stat.lastIndexOf(')');
        const QList<QByteArray> fields = stat.mid(close + 2).split(' ');
        if (open < 0 || fields.size() < 13) continue;
        const double seconds = double(fields[11].toLongLong() + fields[12].toLongLong()) / tick;
        if (task.toInt() == gui_tid) cpu.gui_s += seconds;
        else if (stat.mid(open + 1, close - open - 1) == "EngineWorker") cpu.engine_s += seconds;
        else cpu.other_s += seconds;
    }
    return cpu;
}

}  // namespace ember::app::probe
