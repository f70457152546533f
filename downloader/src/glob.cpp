#include "ember/hub/glob.h"

#include <cstddef>
#include <optional>

namespace ember::hub {
namespace {

// Whether `c` is in the set opening at pattern[i] ('['); the index just past its ']' goes to
// `end`. An unclosed '[' is an ordinary character, as in Python.
std::optional<bool> in_set(std::string_view p, size_t i, char c, size_t& end) {
    size_t j = i + 1;
    const bool negated = j < p.size() && p[j] == '!';
    if (negated) ++j;
    const size_t first = j;
    bool hit = false;
    while (j < p.size() && (p[j] != ']' || j == first)) {
        if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
            const auto u = [](char x) { return static_cast<unsigned char>(x); };
            hit = hit || (u(p[j]) <= u(c) && u(c) <= u(p[j + 2]));
            j += 3;
        } else {
            hit = hit || p[j] == c;
            ++j;
        }
    }
    if (j >= p.size()) return std::nullopt;
    end = j + 1;
    return hit != negated;
}

}  // namespace

bool glob_match(std::string_view p, std::string_view s) {
    // Greedy with one backtrack point: the last '*' seen, retried one character further each time.
    size_t pi = 0, si = 0;
    std::optional<size_t> star_p, star_s;
    while (si < s.size()) {
        if (pi < p.size() && p[pi] == '*') {
            star_p = ++pi;
            star_s = si;
            continue;
        }
        if (pi < p.size()) {
            size_t next = pi + 1;
            bool ok = false;
            if (p[pi] == '?') {
                ok = true;
            } else if (p[pi] == '[') {
                const auto hit = in_set(p, pi, s[si], next);
                ok = hit ? *hit : s[si] == '[';
            } else {
                ok = p[pi] == s[si];
            }
            if (ok) {
                pi = next;
                ++si;
                continue;
            }
        }
        if (!star_p) return false;
        pi = *star_p;
        si = ++*star_s;
    }
    while (pi < p.size() && p[pi] == '*') ++pi;
    return pi == p.size();
}

}  // namespace ember::hub
