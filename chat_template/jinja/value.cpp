#include "chat_template/jinja/value.h"

#include <charconv>
#include <cmath>

namespace ember::jinja {
namespace {

std::string float_repr(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
    std::string s(buf, end);
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    return s;
}

std::string string_repr(const std::string& s) {
    // Python quotes with ' unless the text holds ' and no ".
    const char quote = s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
    std::string out(1, quote);
    for (unsigned char c : s) {
        switch (c) {
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c == quote) {
                    out += '\\';
                    out += char(c);
                } else if (c < 0x20 || c == 0x7f) {
                    static const char* hex = "0123456789abcdef";
                    out += "\\x";
                    out += hex[c >> 4];
                    out += hex[c & 15];
                } else {
                    out += char(c);
                }
        }
    }
    return out + quote;
}

}  // namespace

bool truthy(const Value& v) {
    switch (v.v.index()) {
        case 0: case 1: return false;
        case 2: return v.as_bool();
        case 3: return v.as_int() != 0;
        case 4: return std::get<double>(v.v) != 0.0;
        case 5: return !v.as_string().empty();
        case 6: return !v.as_list().empty();
        case 7: return !v.as_dict().empty();
        default: return true;
    }
}

std::string to_str(const Value& v) {
    if (v.is_undefined()) return {};
    if (v.is_string()) return v.as_string();
    return repr(v);
}

std::string repr(const Value& v) {
    switch (v.v.index()) {
        case 0: return {};
        case 1: return "None";
        case 2: return v.as_bool() ? "True" : "False";
        case 3: return std::to_string(v.as_int());
        case 4: return float_repr(std::get<double>(v.v));
        case 5: return string_repr(v.as_string());
        case 6: {
            std::string out = "[";
            for (const Value& e : v.as_list()) out += (out.size() > 1 ? ", " : "") + repr(e);
            return out + "]";
        }
        case 7: {
            std::string out = "{";
            for (const auto& [k, e] : v.as_dict()) out += (out.size() > 1 ? ", " : "") + string_repr(k) + ": " + repr(e);
            return out + "}";
        }
        default: return "<function>";
    }
}

std::string type_name(const Value& v) {
    static const char* names[] = {"undefined", "NoneType", "bool", "int", "float", "str", "list", "dict", "function"};
    return names[v.v.index()];
}

bool equals(const Value& a, const Value& b) {
    const bool a_num = a.is_number() || a.is_bool(), b_num = b.is_number() || b.is_bool();
    if (a_num && b_num) {
        if (a.is_float() || b.is_float()) return a.as_number() == b.as_number();
        const int64_t x = a.is_bool() ? a.as_bool() : a.as_int(), y = b.is_bool() ? b.as_bool() : b.as_int();
        return x == y;
    }
    if (a.v.index() != b.v.index()) return false;
    switch (a.v.index()) {
        case 0: case 1: return true;
        case 5: return a.as_string() == b.as_string();
        case 6: {
            const List &x = a.as_list(), &y = b.as_list();
            if (x.size() != y.size()) return false;
            for (size_t i = 0; i < x.size(); ++i)
                if (!equals(x[i], y[i])) return false;
            return true;
        }
        case 7: {
            const Dict &x = a.as_dict(), &y = b.as_dict();
            if (x.size() != y.size()) return false;
            for (const auto& [k, e] : x) {
                const Value* other = find(y, k);
                if (!other || !equals(e, *other)) return false;
            }
            return true;
        }
        default: return &a.as_function() == &b.as_function();
    }
}

bool less(const Value& a, const Value& b) {
    if ((a.is_number() || a.is_bool()) && (b.is_number() || b.is_bool())) {
        if (a.is_int() && b.is_int()) return a.as_int() < b.as_int();
        return a.as_number() < b.as_number();
    }
    if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();
    if (a.is_list() && b.is_list()) {
        const List &x = a.as_list(), &y = b.as_list();
        for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
            if (less(x[i], y[i])) return true;
            if (less(y[i], x[i])) return false;
        }
        return x.size() < y.size();
    }
    throw TemplateError("cannot compare " + type_name(a) + " with " + type_name(b));
}

const Value* find(const Dict& d, const std::string& key) {
    for (const auto& [k, v] : d)
        if (k == key) return &v;
    return nullptr;
}

void set(Dict& d, const std::string& key, Value value) {
    for (auto& [k, v] : d)
        if (k == key) {
            v = std::move(value);
            return;
        }
    d.emplace_back(key, std::move(value));
}

std::u32string decode(const std::string& s) {
    std::u32string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        const unsigned char c = s[i];
        const int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (len == 0 || i + size_t(len) > s.size()) {
            out += U'\uFFFD';
            ++i;
            continue;
        }
        char32_t cp = len == 1 ? c : c & (0x7f >> len);
        bool ok = true;
        for (int k = 1; k < len; ++k) {
            const unsigned char cc = s[i + size_t(k)];
            if ((cc >> 6) != 2) ok = false;
            cp = (cp << 6) | (cc & 0x3f);
        }
        if (!ok) {
            out += U'\uFFFD';
            ++i;
            continue;
        }
        out += cp;
        i += size_t(len);
    }
    return out;
}

std::string encode(const std::u32string& s) {
    std::string out;
    out.reserve(s.size());
    for (char32_t c : s) {
        if (c < 0x80) {
            out += char(c);
        } else if (c < 0x800) {
            out += char(0xc0 | (c >> 6));
            out += char(0x80 | (c & 0x3f));
        } else if (c < 0x10000) {
            out += char(0xe0 | (c >> 12));
            out += char(0x80 | ((c >> 6) & 0x3f));
            out += char(0x80 | (c & 0x3f));
        } else {
            out += char(0xf0 | (c >> 18));
            out += char(0x80 | ((c >> 12) & 0x3f));
            out += char(0x80 | ((c >> 6) & 0x3f));
            out += char(0x80 | (c & 0x3f));
        }
    }
    return out;
}

}  // namespace ember::jinja
