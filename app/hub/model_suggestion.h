#pragma once
// The first-run suggestion: what this computer has (memory, CPU threads, GPUs) and the largest
// PowerInfer model that runs on it, its hot neurons on the GPU when there is one; without a GPU,
// the largest that also answers at a readable pace on its CPU threads.

#include <QString>
#include <QVector>

#include "ember/gpu.h"

namespace ember::app {

struct Hardware {
    qint64 ram_bytes = 0;   // physical memory; 0 when unknown
    int cpu_threads = 0;
    GpuProbe gpus;
};

struct ModelSuggestion {
    QString repo;        // Hugging Face repo id; empty: nothing larger than the demo model fits
    QString name;
    qint64 approx_bytes = 0;  // the Q4_0 file, about
    QString why;
};

// Physical memory in bytes; 0 when unknown. Cheap, unlike detect_hardware(), which probes GPUs.
qint64 physical_ram_bytes();
Hardware detect_hardware();

// The largest candidate whose weights, with a fifth more for the KV cache and scratch, fit in
// the memory the OS leaves (all but 2 GiB): the engine reads a model into memory whole, and the
// Hub's fit badges call anything larger "too large for this machine". Without a GPU it must also
// make about 5 tokens a second by a conservative estimate from the CPU threads; `why` says the
// estimate and names a larger model passed over for speed.
ModelSuggestion suggest_model(const Hardware& hw);

}  // namespace ember::app
