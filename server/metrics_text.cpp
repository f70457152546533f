#include "server/metrics_text.h"

#include <cstdio>

namespace ember::server {
namespace {

void metric(std::string& out, const char* name, const char* type, const char* help, double value) {
    char line[64];
    std::snprintf(line, sizeof line, "%.17g", value);
    out += std::string("# HELP ember_") + name + " " + help + "\n# TYPE ember_" + name + " " + type + "\nember_" + name +
           " " + line + "\n";
}

}  // namespace

std::string prometheus_text(const QueueCounters& q, const HttpCounters& http) {
    std::string out;
    metric(out, "http_requests_total", "counter", "HTTP requests answered, every endpoint.", double(http.requests));
    metric(out, "http_errors_total", "counter", "HTTP requests answered with a 4xx or 5xx status.", double(http.errors));
    metric(out, "requests_total", "counter", "Completion requests finished.", double(q.requests));
    metric(out, "requests_cancelled_total", "counter", "Completion requests cancelled because their client went away.",
           double(q.cancelled));
    metric(out, "requests_processing", "gauge", "Completion requests generating now.", double(q.running));
    metric(out, "requests_deferred", "gauge", "Completion requests waiting for their turn.", double(q.queued));
    metric(out, "prompt_tokens_total", "counter", "Prompt tokens evaluated (cached prefixes not counted).",
           double(q.prompt_tokens));
    metric(out, "prompt_tokens_cached_total", "counter", "Prompt tokens reused from the context instead.",
           double(q.cached_tokens));
    metric(out, "tokens_predicted_total", "counter", "Tokens generated.", double(q.generated_tokens));
    metric(out, "prompt_seconds_total", "counter", "Time spent evaluating prompts.", q.prompt_seconds);
    metric(out, "tokens_predicted_seconds_total", "counter", "Time spent generating.", q.generate_seconds);
    metric(out, "prompt_tokens_per_second", "gauge", "Prompt tokens per second, over all requests.",
           q.prompt_seconds > 0 ? double(q.prompt_tokens) / q.prompt_seconds : 0.0);
    metric(out, "predicted_tokens_per_second", "gauge", "Generated tokens per second, over all requests.",
           q.generate_seconds > 0 ? double(q.generated_tokens) / q.generate_seconds : 0.0);
    metric(out, "device_active_neuron_share", "gauge",
           "Sparse models: share of the active FFN neurons computed on the device.", q.device_active_share);
    metric(out, "device_memory_used_bytes", "gauge", "Device memory the model uses (VRAM on a GPU).",
           double(q.device_used_bytes));
    metric(out, "device_memory_budget_bytes", "gauge", "Device memory budget.", double(q.device_budget_bytes));
    return out;
}

}  // namespace ember::server
