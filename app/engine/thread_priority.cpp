#include "app/engine/thread_priority.h"

#include <QThread>

#if defined(Q_OS_LINUX)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#endif

namespace ember::app {

namespace {
#if defined(Q_OS_LINUX)
// CFS weighs nice 5 about a third of nice 0: a GUI thread that wakes to draw gets the core.
constexpr int kNiceIncrement = 5;
#endif
}  // namespace

void lower_current_thread_priority() {
#if defined(Q_OS_LINUX)
    // QThread::LowPriority means nothing under SCHED_OTHER; a thread's own nice value does.
    const auto tid = id_t(::syscall(SYS_gettid));
    errno = 0;
    const int nice = ::getpriority(PRIO_PROCESS, tid);
    if (errno == 0) ::setpriority(PRIO_PROCESS, tid, nice + kNiceIncrement);
#else
    QThread::currentThread()->setPriority(QThread::LowPriority);
#endif
}

}  // namespace ember::app
