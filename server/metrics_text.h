#pragma once
// GET /metrics: the server's counters in Prometheus' text format (version 0.0.4).

#include <cstdint>
#include <string>

#include "server/generation_queue.h"

namespace ember::server {

struct HttpCounters {
    int64_t requests = 0;  // answered, every endpoint
    int64_t errors = 0;    // of which with a 4xx or 5xx status
};

std::string prometheus_text(const QueueCounters& q, const HttpCounters& http);

}  // namespace ember::server
