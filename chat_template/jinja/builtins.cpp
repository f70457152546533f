#include "chat_template/jinja/builtins.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <ctime>

namespace ember::jinja {
namespace {

// range() and "*" build values in memory; a template asking for more is refused.
constexpr int64_t kMaxBuilt = 1 << 20;

const Value* arg(const Args& a, size_t index, const char* name) {
    if (index < a.positional.size()) return &a.positional[index];
    for (const auto& [k, v] : a.named)
        if (k == name) return &v;
    return nullptr;
}

Value arg_or(const Args& a, size_t index, const char* name, Value fallback) {
    const Value* v = arg(a, index, name);
    return v ? *v : std::move(fallback);
}

std::string need_string(const Value& v, const std::string& what) {
    if (!v.is_string()) throw TemplateError(what + " expects a string, got " + type_name(v));
    return v.as_string();
}

int64_t need_int(const Value& v, const std::string& what) {
    if (v.is_int()) return v.as_int();
    if (v.is_bool()) return v.as_bool();
    throw TemplateError(what + " expects an integer, got " + type_name(v));
}

void need_defined(const Value& v) {
    if (v.is_undefined()) throw TemplateError("'" + std::get<Undefined>(v.v).name + "' is undefined");
}

bool is_py_space(char32_t c) { return c == ' ' || (c >= '\t' && c <= '\r') || c == 0x85 || c == 0xa0 || c == 0x3000 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x1680 || c == 0x202f || c == 0x205f || c == 0x1c || c == 0x1d || c == 0x1e || c == 0x1f; }

std::string strip(const std::string& s, const Value* chars, bool left, bool right) {
    const std::u32string u = decode(s);
    const std::u32string set = chars && chars->is_string() ? decode(chars->as_string()) : std::u32string();
    auto drop = [&](char32_t c) { return chars && chars->is_string() ? set.find(c) != std::u32string::npos : is_py_space(c); };
    size_t b = 0, e = u.size();
    if (left) while (b < e && drop(u[b])) ++b;
    if (right) while (e > b && drop(u[e - 1])) --e;
    return encode(u.substr(b, e - b));
}

char32_t upper(char32_t c) { return c < 0x80 ? char32_t(std::toupper(int(c))) : c; }
char32_t lower(char32_t c) { return c < 0x80 ? char32_t(std::tolower(int(c))) : c; }
bool is_alpha(char32_t c) { return c >= 0x80 || std::isalpha(int(c)); }

std::string map_case(const std::string& s, char32_t (*f)(char32_t)) {
    std::u32string u = decode(s);
    for (char32_t& c : u) c = f(c);
    return encode(u);
}

std::string title(const std::string& s) {
    std::u32string u = decode(s);
    bool start = true;
    for (char32_t& c : u) {
        c = start ? upper(c) : lower(c);
        start = !is_alpha(c);
    }
    return encode(u);
}

std::string capitalize(const std::string& s) {
    std::u32string u = decode(s);
    for (size_t i = 0; i < u.size(); ++i) u[i] = i == 0 ? upper(u[i]) : lower(u[i]);
    return encode(u);
}

std::string replace(const std::string& s, const std::string& from, const std::string& to, int64_t count) {
    std::string out;
    size_t pos = 0;
    int64_t done = 0;
    if (from.empty()) {
        // Python inserts `to` between every character (and at both ends).
        const std::u32string u = decode(s);
        for (char32_t c : u) {
            if (count < 0 || done < count) out += to, ++done;
            out += encode(std::u32string(1, c));
        }
        if (count < 0 || done < count) out += to;
        return out;
    }
    while (count < 0 || done < count) {
        const size_t hit = s.find(from, pos);
        if (hit == std::string::npos) break;
        out.append(s, pos, hit - pos);
        out += to;
        pos = hit + from.size();
        ++done;
    }
    out.append(s, pos);
    return out;
}

Value split(const std::string& s, const Value* sep, int64_t maxsplit) {
    List parts;
    if (!sep || sep->is_none()) {
        const std::u32string u = decode(s);
        size_t i = 0;
        while (i < u.size()) {
            while (i < u.size() && is_py_space(u[i])) ++i;
            if (i == u.size()) break;
            if (maxsplit >= 0 && int64_t(parts.size()) == maxsplit) {
                size_t e = u.size();
                while (e > i && is_py_space(u[e - 1])) --e;
                parts.emplace_back(encode(u.substr(i, e - i)));
                break;
            }
            size_t j = i;
            while (j < u.size() && !is_py_space(u[j])) ++j;
            parts.emplace_back(encode(u.substr(i, j - i)));
            i = j;
        }
        return Value(std::move(parts));
    }
    const std::string d = need_string(*sep, "split()");
    if (d.empty()) throw TemplateError("split(): empty separator");
    size_t pos = 0;
    while (maxsplit < 0 || int64_t(parts.size()) < maxsplit) {
        const size_t hit = s.find(d, pos);
        if (hit == std::string::npos) break;
        parts.emplace_back(s.substr(pos, hit - pos));
        pos = hit + d.size();
    }
    parts.emplace_back(s.substr(pos));
    return Value(std::move(parts));
}

int64_t length(const Value& v) {
    if (v.is_string()) return int64_t(decode(v.as_string()).size());
    if (v.is_list()) return int64_t(v.as_list().size());
    if (v.is_dict()) return int64_t(v.as_dict().size());
    if (v.is_undefined()) return 0;
    throw TemplateError("object of type " + type_name(v) + " has no length");
}

List to_list(const Value& v) {
    if (v.is_list()) return v.as_list();
    if (v.is_dict()) {
        List keys;
        for (const auto& [k, e] : v.as_dict()) keys.emplace_back(k);
        return keys;
    }
    if (v.is_string()) {
        List chars;
        for (char32_t c : decode(v.as_string())) chars.emplace_back(encode(std::u32string(1, c)));
        return chars;
    }
    if (v.is_undefined()) return {};
    throw TemplateError(type_name(v) + " is not iterable");
}

bool parse_index(const std::string& s, size_t& out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

// Jinja's attribute path for selectattr/map/join: "a.b.0" walks dict keys and list indices.
Value attribute(const Value& v, const std::string& path) {
    Value cur = v;
    size_t start = 0;
    while (true) {
        const size_t dot = path.find('.', start);
        const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (cur.is_dict()) {
            const Value* f = find(cur.as_dict(), key);
            cur = f ? *f : Value(Undefined{key});
        } else if (size_t i = 0; cur.is_list() && parse_index(key, i)) {
            cur = i < cur.as_list().size() ? cur.as_list()[i] : Value(Undefined{key});
        } else {
            cur = Value(Undefined{key});
        }
        if (dot == std::string::npos) return cur;
        start = dot + 1;
    }
}

std::string html_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&#34;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

void json_string(std::string& out, const std::string& s) {
    out += '"';
    for (unsigned char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (c < 0x20) {
                    static const char* hex = "0123456789abcdef";
                    out += "\\u00";
                    out += hex[c >> 4];
                    out += hex[c & 15];
                } else {
                    out += char(c);
                }
        }
    }
    out += '"';
}

void json(std::string& out, const Value& v, int indent, int depth) {
    if (depth > 100) throw TemplateError("tojson: value nests too deeply");
    auto newline = [&](int d) {
        if (indent < 0) return;
        out += '\n';
        out.append(size_t(indent) * size_t(d), ' ');
    };
    const char* comma = indent < 0 ? ", " : ",";
    switch (v.v.index()) {
        case 0: throw TemplateError("tojson: '" + std::get<Undefined>(v.v).name + "' is undefined");
        case 1: out += "null"; return;
        case 2: out += v.as_bool() ? "true" : "false"; return;
        case 3: out += std::to_string(v.as_int()); return;
        case 4: {
            const double d = std::get<double>(v.v);
            out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d < 0 ? "-Infinity" : "Infinity") : repr(v);
            return;
        }
        case 5: json_string(out, v.as_string()); return;
        case 6: {
            const List& l = v.as_list();
            if (l.empty()) { out += "[]"; return; }
            out += '[';
            for (size_t i = 0; i < l.size(); ++i) {
                if (i) out += comma;
                newline(depth + 1);
                json(out, l[i], indent, depth + 1);
            }
            newline(depth);
            out += ']';
            return;
        }
        case 7: {
            const Dict& d = v.as_dict();
            if (d.empty()) { out += "{}"; return; }
            out += '{';
            bool first = true;
            for (const auto& [k, e] : d) {
                if (!first) out += comma;
                first = false;
                newline(depth + 1);
                json_string(out, k);
                out += ": ";
                json(out, e, indent, depth + 1);
            }
            newline(depth);
            out += '}';
            return;
        }
        default: throw TemplateError("tojson: a function is not JSON");
    }
}

List select(const Value& seq, Args& args, bool by_attribute, bool keep) {
    List out;
    const size_t first_test_arg = by_attribute ? 1 : 0;
    std::string attr;
    if (by_attribute) attr = need_string(arg_or(args, 0, "attribute", Value()), "selectattr()");
    const Value* test = arg(args, first_test_arg, "test");
    Args test_args;
    for (size_t i = first_test_arg + 1; i < args.positional.size(); ++i) test_args.positional.push_back(args.positional[i]);
    for (const Value& item : to_list(seq)) {
        const Value subject = by_attribute ? attribute(item, attr) : item;
        Args a = test_args;
        const bool pass = test ? apply_test(need_string(*test, "select()"), subject, a) : truthy(subject);
        if (pass == keep) out.push_back(item);
    }
    return out;
}

}  // namespace

std::string to_json(const Value& v, int indent) {
    std::string out;
    json(out, v, indent, 0);
    return out;
}

Value apply_filter(const std::string& name, const Value& v, Args& args) {
    auto str = [&] { return to_str(v); };
    if (name == "trim") { need_defined(v); return Value(strip(str(), arg(args, 0, "chars"), true, true)); }
    if (name == "upper") return Value(map_case(str(), upper));
    if (name == "lower") return Value(map_case(str(), lower));
    if (name == "title") return Value(title(str()));
    if (name == "capitalize") return Value(capitalize(str()));
    if (name == "length" || name == "count") return Value(length(v));
    if (name == "string") return Value(str());
    if (name == "safe") return v;
    if (name == "e" || name == "escape") return Value(html_escape(str()));
    if (name == "list") return Value(to_list(v));
    if (name == "first") { List l = to_list(v); return l.empty() ? Value(Undefined{"first"}) : l.front(); }
    if (name == "last") { List l = to_list(v); return l.empty() ? Value(Undefined{"last"}) : l.back(); }
    if (name == "reverse") {
        if (v.is_string()) { std::u32string u = decode(v.as_string()); std::reverse(u.begin(), u.end()); return Value(encode(u)); }
        List l = to_list(v);
        std::reverse(l.begin(), l.end());
        return Value(std::move(l));
    }
    if (name == "join") {
        const std::string sep = to_str(arg_or(args, 0, "d", Value("")));
        const Value* attr = arg(args, 1, "attribute");
        std::string out;
        bool first = true;
        for (const Value& e : to_list(v)) {
            if (!first) out += sep;
            first = false;
            out += to_str(attr ? attribute(e, to_str(*attr)) : e);
        }
        return Value(out);
    }
    if (name == "default" || name == "d") {
        const bool boolean = truthy(arg_or(args, 1, "boolean", Value(false)));
        if (v.is_undefined() || (boolean && !truthy(v))) return arg_or(args, 0, "default_value", Value(""));
        return v;
    }
    if (name == "tojson") {
        const Value indent = arg_or(args, 0, "indent", Value(None{}));
        return Value(to_json(v, indent.is_none() ? -1 : int(std::clamp<int64_t>(need_int(indent, "tojson"), 0, 16))));
    }
    if (name == "int") {
        if (v.is_int()) return v;
        if (v.is_bool()) return Value(int64_t(v.as_bool()));
        if (v.is_float()) return Value(int64_t(std::get<double>(v.v)));
        if (v.is_string()) {
            const std::string s = strip(v.as_string(), nullptr, true, true);
            int64_t out = 0;
            auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
            if (ec == std::errc() && p == s.data() + s.size()) return Value(out);
        }
        return arg_or(args, 0, "default", Value(int64_t(0)));
    }
    if (name == "float") {
        if (v.is_number() || v.is_bool()) return Value(v.as_number());
        if (v.is_string()) {
            char* end = nullptr;
            const std::string s = strip(v.as_string(), nullptr, true, true);
            const double d = std::strtod(s.c_str(), &end);
            if (!s.empty() && end == s.c_str() + s.size()) return Value(d);
        }
        return arg_or(args, 0, "default", Value(0.0));
    }
    if (name == "abs") {
        if (v.is_int()) return Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
        if (v.is_float()) return Value(std::fabs(std::get<double>(v.v)));
        throw TemplateError("abs expects a number, got " + type_name(v));
    }
    if (name == "replace") {
        const std::string from = to_str(arg_or(args, 0, "old", Value(""))), to = to_str(arg_or(args, 1, "new", Value("")));
        const Value count = arg_or(args, 2, "count", Value(None{}));
        return Value(replace(str(), from, to, count.is_none() ? -1 : need_int(count, "replace")));
    }
    if (name == "items") {
        if (v.is_undefined()) return Value(List{});
        if (!v.is_dict()) throw TemplateError("items expects a mapping, got " + type_name(v));
        List out;
        for (const auto& [k, e] : v.as_dict()) out.emplace_back(List{Value(k), e});
        return Value(std::move(out));
    }
    if (name == "selectattr") return Value(select(v, args, true, true));
    if (name == "rejectattr") return Value(select(v, args, true, false));
    if (name == "select") return Value(select(v, args, false, true));
    if (name == "reject") return Value(select(v, args, false, false));
    if (name == "map") {
        List out;
        const Value* attr = nullptr;
        for (const auto& [k, e] : args.named)
            if (k == "attribute") attr = &e;
        if (attr) {
            const Value fallback = arg_or(Args{{}, args.named}, 99, "default", Value(Undefined{"map"}));
            for (const Value& e : to_list(v)) {
                Value got = attribute(e, to_str(*attr));
                out.push_back(got.is_undefined() && !fallback.is_undefined() ? fallback : got);
            }
            return Value(std::move(out));
        }
        if (args.positional.empty()) throw TemplateError("map needs a filter name or attribute=");
        const std::string filter = need_string(args.positional[0], "map()");
        Args rest;
        rest.positional.assign(args.positional.begin() + 1, args.positional.end());
        for (const Value& e : to_list(v)) {
            Args a = rest;
            out.push_back(apply_filter(filter, e, a));
        }
        return Value(std::move(out));
    }
    if (name == "unique") {
        List out;
        for (const Value& e : to_list(v))
            if (std::none_of(out.begin(), out.end(), [&](const Value& o) { return equals(o, e); })) out.push_back(e);
        return Value(std::move(out));
    }
    if (name == "sort") {
        List out = to_list(v);
        const bool reverse = truthy(arg_or(args, 0, "reverse", Value(false)));
        const Value attr = arg_or(args, 2, "attribute", Value(None{}));
        auto key = [&](const Value& e) { return attr.is_none() ? e : attribute(e, to_str(attr)); };
        std::stable_sort(out.begin(), out.end(), [&](const Value& a, const Value& b) {
            return reverse ? less(key(b), key(a)) : less(key(a), key(b));
        });
        return Value(std::move(out));
    }
    if (name == "indent") {
        const Value width = arg_or(args, 0, "width", Value(int64_t(4)));
        const std::string pad = width.is_string() ? width.as_string() : std::string(size_t(std::clamp<int64_t>(need_int(width, "indent"), 0, 64)), ' ');
        const bool first = truthy(arg_or(args, 1, "first", Value(false)));
        const bool blank = truthy(arg_or(args, 2, "blank", Value(false)));
        const std::string s = str();
        std::string out;
        size_t start = 0;
        bool first_line = true;
        while (start <= s.size()) {
            const size_t nl = s.find('\n', start);
            const std::string line = s.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
            if ((first_line ? first : true) && (blank || !line.empty())) out += pad;
            out += line;
            if (nl == std::string::npos) break;
            out += '\n';
            start = nl + 1;
            first_line = false;
        }
        return Value(out);
    }
    throw TemplateError("unknown filter '" + name + "'");
}

bool apply_test(const std::string& name, const Value& v, Args& args) {
    auto other = [&]() -> const Value& {
        const Value* o = arg(args, 0, "other");
        if (!o) throw TemplateError("test '" + name + "' needs an argument");
        return *o;
    };
    if (name == "defined") return !v.is_undefined();
    if (name == "undefined") return v.is_undefined();
    if (name == "none") return v.is_none();
    if (name == "boolean") return v.is_bool();
    if (name == "true") return v.is_bool() && v.as_bool();
    if (name == "false") return v.is_bool() && !v.as_bool();
    if (name == "integer") return v.is_int();
    if (name == "float") return v.is_float();
    if (name == "number") return v.is_number() || v.is_bool();
    if (name == "string") return v.is_string();
    if (name == "mapping") return v.is_dict();
    if (name == "iterable") return v.is_list() || v.is_dict() || v.is_string();
    if (name == "sequence") return v.is_list() || v.is_dict() || v.is_string();
    if (name == "callable") return v.is_function();
    if (name == "lower") return v.is_string() && map_case(v.as_string(), lower) == v.as_string();
    if (name == "upper") return v.is_string() && map_case(v.as_string(), upper) == v.as_string();
    if (name == "equalto" || name == "eq" || name == "==" || name == "sameas") return equals(v, other());
    if (name == "ne" || name == "!=") return !equals(v, other());
    if (name == "lt" || name == "lessthan") return less(v, other());
    if (name == "gt" || name == "greaterthan") return less(other(), v);
    if (name == "le") return !less(other(), v);
    if (name == "ge") return !less(v, other());
    if (name == "odd") return need_int(v, "odd") % 2 != 0;
    if (name == "even") return need_int(v, "even") % 2 == 0;
    if (name == "divisibleby") {
        const int64_t d = need_int(other(), "divisibleby");
        return d != 0 && need_int(v, "divisibleby") % d == 0;
    }
    if (name == "in") {
        const Value& o = other();
        if (o.is_string()) return v.is_string() && o.as_string().find(v.as_string()) != std::string::npos;
        if (o.is_dict()) return v.is_string() && find(o.as_dict(), v.as_string()) != nullptr;
        const List l = to_list(o);
        return std::any_of(l.begin(), l.end(), [&](const Value& e) { return equals(e, v); });
    }
    throw TemplateError("unknown test '" + name + "'");
}

bool call_method(const Value& v, const std::string& name, Args& args, Value& result) {
    if (v.is_string()) {
        const std::string& s = v.as_string();
        if (name == "strip") result = Value(strip(s, arg(args, 0, "chars"), true, true));
        else if (name == "lstrip") result = Value(strip(s, arg(args, 0, "chars"), true, false));
        else if (name == "rstrip") result = Value(strip(s, arg(args, 0, "chars"), false, true));
        else if (name == "upper") result = Value(map_case(s, upper));
        else if (name == "lower") result = Value(map_case(s, lower));
        else if (name == "title") result = Value(title(s));
        else if (name == "capitalize") result = Value(capitalize(s));
        else if (name == "startswith" || name == "endswith") {
            const Value& p = arg_or(args, 0, "prefix", Value(""));
            List options = p.is_list() ? p.as_list() : List{p};
            bool hit = false;
            for (const Value& o : options) {
                const std::string x = need_string(o, name + "()");
                hit = hit || (name == "startswith" ? s.compare(0, x.size(), x) == 0 && s.size() >= x.size()
                                                   : s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0);
            }
            result = Value(hit);
        } else if (name == "split") {
            const Value max = arg_or(args, 1, "maxsplit", Value(int64_t(-1)));
            result = split(s, arg(args, 0, "sep"), need_int(max, "split()"));
        } else if (name == "replace") {
            const Value count = arg_or(args, 2, "count", Value(int64_t(-1)));
            result = Value(replace(s, need_string(arg_or(args, 0, "old", Value()), "replace()"),
                                   need_string(arg_or(args, 1, "new", Value()), "replace()"), need_int(count, "replace()")));
        } else if (name == "find") {
            const size_t at = s.find(need_string(arg_or(args, 0, "sub", Value()), "find()"));
            result = Value(at == std::string::npos ? int64_t(-1) : int64_t(decode(s.substr(0, at)).size()));
        } else if (name == "join") {
            std::string out;
            bool first = true;
            for (const Value& e : to_list(arg_or(args, 0, "iterable", Value(List{})))) {
                if (!first) out += s;
                first = false;
                out += need_string(e, "join()");
            }
            result = Value(out);
        } else {
            return false;
        }
        return true;
    }
    if (v.is_dict()) {
        const Dict& d = v.as_dict();
        if (name == "items") {
            List out;
            for (const auto& [k, e] : d) out.emplace_back(List{Value(k), e});
            result = Value(std::move(out));
        } else if (name == "keys") {
            List out;
            for (const auto& [k, e] : d) out.emplace_back(k);
            result = Value(std::move(out));
        } else if (name == "values") {
            List out;
            for (const auto& [k, e] : d) out.push_back(e);
            result = Value(std::move(out));
        } else if (name == "get") {
            const Value key = arg_or(args, 0, "key", Value());
            const Value* hit = key.is_string() ? find(d, key.as_string()) : nullptr;
            result = hit ? *hit : arg_or(args, 1, "default", Value(None{}));
        } else {
            return false;
        }
        return true;
    }
    return false;
}

Dict make_globals() {
    Dict g;
    set(g, "range", Value(Function([](Args& a) {
        int64_t start = 0, stop = 0, step = 1;
        const size_t n = a.positional.size();
        if (n == 0 || n > 3) throw TemplateError("range() takes 1 to 3 arguments");
        if (n == 1) stop = need_int(a.positional[0], "range()");
        else start = need_int(a.positional[0], "range()"), stop = need_int(a.positional[1], "range()");
        if (n == 3) step = need_int(a.positional[2], "range()");
        if (step == 0) throw TemplateError("range() step must not be zero");
        const long double count = (static_cast<long double>(stop) - start) / step;
        if (count > kMaxBuilt) throw TemplateError("range() of more than " + std::to_string(kMaxBuilt) + " numbers");
        List out;
        for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.emplace_back(i);
        return Value(std::move(out));
    })));
    set(g, "namespace", Value(Function([](Args& a) {
        Dict d;
        for (auto& [k, v] : a.named) set(d, k, v);
        return Value(std::move(d));
    })));
    set(g, "raise_exception", Value(Function([](Args& a) -> Value {
        throw TemplateError("the template refused: " + (a.positional.empty() ? std::string() : to_str(a.positional[0])));
    })));
    set(g, "strftime_now", Value(Function([](Args& a) {
        const std::string format = need_string(arg_or(a, 0, "format", Value("")), "strftime_now()");
        const std::time_t now = std::time(nullptr);
        std::tm tm{};
#ifdef _WIN32
        localtime_s(&tm, &now);
#else
        localtime_r(&now, &tm);
#endif
        char buf[256];
        const size_t n = std::strftime(buf, sizeof buf, format.c_str(), &tm);
        return Value(std::string(buf, n));
    })));
    return g;
}

}  // namespace ember::jinja
