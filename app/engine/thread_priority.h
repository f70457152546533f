#pragma once
// Inference below the interface: the engine's threads take every core they are given, and on a
// machine with few cores the GUI thread would wait for them to lay out and draw a frame.

namespace ember::app {

// Lowers the calling thread's scheduling priority below normal (Linux: five nice steps; elsewhere
// Qt's LowPriority). Threads it starts afterwards (the engine's thread pool) inherit that on
// Linux. Idle cores still run it at full speed; only when the GUI wants a core does it come first.
void lower_current_thread_priority();

}  // namespace ember::app
