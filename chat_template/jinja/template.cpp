#include "chat_template/jinja/template.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "chat_template/jinja/ast.h"
#include "chat_template/jinja/builtins.h"
#include "chat_template/jinja/lexer.h"
#include "chat_template/jinja/parser.h"

namespace ember::jinja {
namespace {

// Far above what any chat prompt needs; they stop a hostile template, not a real one.
constexpr size_t kMaxOutput = 16u << 20;
constexpr size_t kMaxSteps = 1'000'000;
// Bytes of strings and lists the expressions produce, copies included: bounds the time a
// template can spend building values it may never print.
constexpr uint64_t kMaxBuiltBytes = 1ull << 30;
constexpr int kMaxCallDepth = 200;

// Python's ints have no bound; here they stop at int64 and say so. Checked by hand, not with
// compiler builtins, so that every compiler takes it.
std::optional<int64_t> checked(const std::string& op, int64_t a, int64_t b) {
    constexpr int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
    if (op == "+") {
        if ((b > 0 && a > hi - b) || (b < 0 && a < lo - b)) return std::nullopt;
        return a + b;
    }
    if (op == "-") {
        if ((b < 0 && a > hi + b) || (b > 0 && a < lo + b)) return std::nullopt;
        return a - b;
    }
    const bool overflows = a > 0 ? (b > 0 ? a > hi / b : b < lo / a) : (b > 0 ? a < lo / b : a != 0 && b < hi / a);
    if (overflows) return std::nullopt;
    return a * b;
}

enum class Flow { Normal, Break, Continue };

class Renderer {
public:
    Renderer(const Dict& context) : globals_(make_globals()), context_(context) { scopes_.emplace_back(); }

    std::string run(const std::vector<Node>& nodes) {
        if (render(nodes) != Flow::Normal) throw TemplateError("break or continue outside a loop");
        return std::move(out_);
    }

private:
    [[noreturn]] static void fail(int line, const std::string& what) {
        throw TemplateError("line " + std::to_string(line) + ": " + what);
    }

    void step(int line) {
        if (++steps_ > kMaxSteps) fail(line, "the template runs too long (over " + std::to_string(kMaxSteps) + " steps)");
    }

    void emit(const std::string& s, int line) {
        if (out_.size() + s.size() > kMaxOutput) fail(line, "the rendered prompt exceeds " + std::to_string(kMaxOutput >> 20) + " MiB");
        out_ += s;
    }

    Flow render(const std::vector<Node>& nodes) {
        for (const Node& n : nodes) {
            step(n.line);
            switch (n.kind) {
                case Node::Text: emit(n.text, n.line); break;
                case Node::Output: emit(to_str(eval(*n.expr)), n.line); break;
                case Node::If: {
                    const std::vector<Node>* chosen = &n.otherwise;
                    for (const auto& [cond, body] : n.branches)
                        if (truthy(eval(*cond))) {
                            chosen = &body;
                            break;
                        }
                    if (Flow f = render(*chosen); f != Flow::Normal) return f;
                    break;
                }
                case Node::For: render_for(n); break;
                case Node::Set: assign(n, eval(*n.expr)); break;
                case Node::SetBlock: assign(n, Value(capture(n.body, n.line))); break;
                case Node::Macro: {
                    const Node* macro = &n;
                    set(scopes_.back(), n.text, Value(Function([this, macro](Args& a) { return call_macro(*macro, a); })));
                    break;
                }
                case Node::FilterBlock: {
                    std::string body = capture(n.body, n.line);
                    scopes_.emplace_back();
                    set(scopes_.back(), kFilterBody, Value(std::move(body)));
                    Value filtered = eval(*n.expr);
                    scopes_.pop_back();
                    emit(to_str(filtered), n.line);
                    break;
                }
                case Node::CallBlock: render_call_block(n); break;
                case Node::Break: return Flow::Break;
                case Node::Continue: return Flow::Continue;
            }
        }
        return Flow::Normal;
    }

    // What `body` prints, without printing it.
    std::string capture(const std::vector<Node>& body, int line) {
        std::string saved = std::move(out_);
        out_.clear();
        const Flow f = render(body);
        std::swap(saved, out_);
        if (f != Flow::Normal) fail(line, "break or continue outside a loop");
        return saved;
    }

    // Binds a macro's or call block's parameters: positional arguments, then named ones, then
    // the defaults (evaluated in the current scopes), else undefined.
    Dict bind_parameters(const Node& m, Args& a) {
        Dict locals;
        for (size_t k = 0; k < m.targets.size(); ++k) {
            const std::string& name = m.targets[k];
            Value v = Value(Undefined{name});
            if (k < a.positional.size()) {
                v = a.positional[k];
            } else if (auto it = std::find_if(a.named.begin(), a.named.end(), [&](const auto& p) { return p.first == name; });
                       it != a.named.end()) {
                v = it->second;
            } else if (m.defaults[k]) {
                v = eval(*m.defaults[k]);
            }
            set(locals, name, std::move(v));
        }
        return locals;
    }

    // The macro is called with one more named argument, `caller`: a function that renders the
    // block's body where the block stands (its variables, and the block's own parameters).
    void render_call_block(const Node& n) {
        const Value caller(Function([this, &n, site = scopes_](Args& args) {
            DepthGuard guard(*this, n.line);
            Dict locals = bind_parameters(n, args);
            std::vector<Dict> callers = std::move(scopes_);
            scopes_ = site;
            scopes_.push_back(std::move(locals));
            std::string printed = capture(n.body, n.line);
            scopes_ = std::move(callers);
            return Value(std::move(printed));
        }));
        emit(to_str(call(*n.expr, caller)), n.line);
    }

    void assign(const Node& n, Value v) {
        if (n.targets.size() == 1) {
            set(scopes_.back(), n.targets[0], std::move(v));
            return;
        }
        Value target = lookup(n.targets[0]);
        if (!target.is_dict()) fail(n.line, "cannot set an attribute of " + n.targets[0] + " (" + type_name(target) + ")");
        set(target.as_dict(), n.targets[1], std::move(v));
    }

    // A macro sees its arguments and the template's top level, not its caller's variables, and
    // returns what its body printed.
    Value call_macro(const Node& m, Args& a) {
        DepthGuard guard(*this, m.line);
        Dict locals = bind_parameters(m, a);
        if (auto it = std::find_if(a.named.begin(), a.named.end(), [](const auto& p) { return p.first == "caller"; });
            it != a.named.end() && std::find(m.targets.begin(), m.targets.end(), "caller") == m.targets.end())
            set(locals, "caller", it->second);
        std::vector<Dict> callers = std::move(scopes_);
        scopes_ = {callers.front(), std::move(locals)};
        std::string printed = capture(m.body, m.line);
        scopes_ = std::move(callers);
        return Value(std::move(printed));
    }

    void render_for(const Node& n) {
        const Value iterable = eval(*n.expr);
        if (iterable.is_none() || iterable.is_bool() || iterable.is_number() || iterable.is_function())
            fail(n.line, "cannot loop over " + type_name(iterable));
        Args none;
        List items = apply_filter("list", iterable, none).as_list();
        if (n.filter) {
            List kept;
            for (Value& item : items) {
                scopes_.emplace_back();
                bind(n, item);
                const bool keep = truthy(eval(*n.filter));
                scopes_.pop_back();
                if (keep) kept.push_back(std::move(item));
            }
            items = std::move(kept);
        }
        if (items.empty()) {
            render(n.otherwise);
            return;
        }
        const int64_t count = int64_t(items.size());
        for (int64_t i = 0; i < count; ++i) {
            step(n.line);
            scopes_.emplace_back();
            bind(n, items[size_t(i)]);
            Dict loop;
            set(loop, "index", Value(i + 1));
            set(loop, "index0", Value(i));
            set(loop, "revindex", Value(count - i));
            set(loop, "revindex0", Value(count - i - 1));
            set(loop, "first", Value(i == 0));
            set(loop, "last", Value(i == count - 1));
            set(loop, "length", Value(count));
            set(loop, "previtem", i > 0 ? items[size_t(i - 1)] : Value(Undefined{"previtem"}));
            set(loop, "nextitem", i + 1 < count ? items[size_t(i + 1)] : Value(Undefined{"nextitem"}));
            set(loop, "cycle", Value(Function([i](Args& a) {
                    if (a.positional.empty()) throw TemplateError("loop.cycle() needs arguments");
                    return a.positional[size_t(i) % a.positional.size()];
                })));
            set(scopes_.back(), "loop", Value(std::move(loop)));
            const Flow f = render(n.body);
            scopes_.pop_back();
            if (f == Flow::Break) break;
        }
    }

    void bind(const Node& n, const Value& item) {
        if (n.targets.size() == 1) {
            set(scopes_.back(), n.targets[0], item);
            return;
        }
        if (!item.is_list() || item.as_list().size() != n.targets.size())
            fail(n.line, "cannot unpack " + repr(item) + " into " + std::to_string(n.targets.size()) + " loop variables");
        for (size_t k = 0; k < n.targets.size(); ++k) set(scopes_.back(), n.targets[k], item.as_list()[k]);
    }

    Value lookup(const std::string& name) const {
        for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s)
            if (const Value* v = find(*s, name)) return *v;
        if (const Value* v = find(context_, name)) return *v;
        if (const Value* v = find(globals_, name)) return *v;
        return Value(Undefined{name});
    }

    static void need_defined(const Value& v, int line) {
        if (v.is_undefined()) fail(line, "'" + std::get<Undefined>(v.v).name + "' is undefined");
    }

    Args eval_args(const Expr& e, size_t first) {
        Args a;
        for (size_t k = first; k < e.args.size(); ++k) a.positional.push_back(eval(*e.args[k]));
        for (const auto& [name, arg] : e.named) a.named.emplace_back(name, eval(*arg));
        return a;
    }

    struct DepthGuard {
        DepthGuard(Renderer& r, int line) : r_(r) {
            if (++r_.depth_ > kMaxCallDepth) fail(line, "expression nests too deeply");
        }
        ~DepthGuard() { --r_.depth_; }
        Renderer& r_;
    };

    Value eval(const Expr& e) {
        DepthGuard guard(*this, e.line);
        Value v = eval_inner(e);
        if (v.is_string()) built_ += v.as_string().size();
        else if (v.is_list()) built_ += v.as_list().size() * sizeof(Value);
        if (built_ > kMaxBuiltBytes) fail(e.line, "the template builds more than " + std::to_string(kMaxBuiltBytes >> 20) + " MiB of values");
        return v;
    }

    Value eval_inner(const Expr& e) {
        switch (e.kind) {
            case Expr::Literal: return e.literal;
            case Expr::Name: return lookup(e.name);
            case Expr::Attr: {
                const Value subject = eval(*e.args[0]);
                need_defined(subject, e.line);
                if (subject.is_dict())
                    if (const Value* v = find(subject.as_dict(), e.name)) return *v;
                return Value(Undefined{e.name});
            }
            case Expr::Item: return item(eval(*e.args[0]), eval(*e.args[1]), e.line);
            case Expr::Slice: return slice(e);
            case Expr::Call: return call(e);
            case Expr::Filter: {
                const Value subject = eval(*e.args[0]);
                Args a = eval_args(e, 1);
                try {
                    return apply_filter(e.name, subject, a);
                } catch (const TemplateError& err) {
                    fail(e.line, err.what());
                }
            }
            case Expr::Test: {
                const Value subject = eval(*e.args[0]);
                Args a = eval_args(e, 1);
                try {
                    return Value(apply_test(e.name, subject, a) != e.negated);
                } catch (const TemplateError& err) {
                    fail(e.line, err.what());
                }
            }
            case Expr::Not: return Value(!truthy(eval(*e.args[0])));
            case Expr::Negate: {
                const Value v = eval(*e.args[0]);
                if (v.is_int()) {
                    if (v.as_int() == INT64_MIN) fail(e.line, "integer overflow");
                    return Value(-v.as_int());
                }
                if (v.is_bool()) return Value(-int64_t(v.as_bool()));
                if (v.is_float()) return Value(-std::get<double>(v.v));
                need_defined(v, e.line);
                fail(e.line, "bad operand type for unary -: " + type_name(v));
            }
            case Expr::And: {
                Value l = eval(*e.args[0]);
                return truthy(l) ? eval(*e.args[1]) : l;
            }
            case Expr::Or: {
                Value l = eval(*e.args[0]);
                return truthy(l) ? l : eval(*e.args[1]);
            }
            case Expr::Conditional:
                if (truthy(eval(*e.args[0]))) return eval(*e.args[1]);
                return e.args[2] ? eval(*e.args[2]) : Value(Undefined{"else"});
            case Expr::ListLit: {
                List l;
                for (const auto& a : e.args) l.push_back(eval(*a));
                return Value(std::move(l));
            }
            case Expr::DictLit: {
                Dict d;
                for (size_t k = 0; k + 1 < e.args.size(); k += 2) {
                    const Value key = eval(*e.args[k]);
                    if (!key.is_string()) fail(e.line, "dict keys must be strings, got " + type_name(key));
                    set(d, key.as_string(), eval(*e.args[k + 1]));
                }
                return Value(std::move(d));
            }
            case Expr::Binary: return binary(e);
        }
        fail(e.line, "unknown expression");
    }

    Value item(const Value& subject, const Value& key, int line) {
        need_defined(subject, line);
        if (subject.is_dict()) {
            if (key.is_string())
                if (const Value* v = find(subject.as_dict(), key.as_string())) return *v;
            return Value(Undefined{to_str(key)});
        }
        if ((subject.is_list() || subject.is_string()) && (key.is_int() || key.is_bool())) {
            int64_t i = key.is_int() ? key.as_int() : key.as_bool();
            if (subject.is_list()) {
                const List& l = subject.as_list();
                if (i < 0) i += int64_t(l.size());
                if (i < 0 || i >= int64_t(l.size())) return Value(Undefined{std::to_string(i)});
                return l[size_t(i)];
            }
            const std::u32string u = decode(subject.as_string());
            if (i < 0) i += int64_t(u.size());
            if (i < 0 || i >= int64_t(u.size())) return Value(Undefined{std::to_string(i)});
            return Value(encode(u.substr(size_t(i), 1)));
        }
        return Value(Undefined{to_str(key)});
    }

    Value slice(const Expr& e) {
        const Value subject = eval(*e.args[0]);
        need_defined(subject, e.line);
        auto bound = [&](size_t k) -> Value { return e.args[k] ? eval(*e.args[k]) : Value(None{}); };
        const Value start = bound(1), stop = bound(2), stride = bound(3);
        int64_t step = 1;
        if (!stride.is_none()) {
            if (!stride.is_int()) fail(e.line, "slice step must be an integer");
            step = stride.as_int();
            if (step == 0) fail(e.line, "slice step cannot be zero");
        }
        const bool is_string = subject.is_string();
        if (!is_string && !subject.is_list()) fail(e.line, "cannot slice " + type_name(subject));
        const std::u32string u = is_string ? decode(subject.as_string()) : std::u32string();
        const int64_t n = is_string ? int64_t(u.size()) : int64_t(subject.as_list().size());
        // Python's slice.indices().
        auto clamp = [&](const Value& v, int64_t fallback, int64_t lo, int64_t hi) {
            if (v.is_none()) return fallback;
            if (!v.is_int()) fail(e.line, "slice indices must be integers");
            int64_t x = v.as_int();
            if (x < 0) x += n;
            return std::clamp(x, lo, hi);
        };
        const int64_t b = clamp(start, step > 0 ? 0 : n - 1, step > 0 ? 0 : -1, step > 0 ? n : n - 1);
        const int64_t end = clamp(stop, step > 0 ? n : -1, step > 0 ? 0 : -1, step > 0 ? n : n - 1);
        if (is_string) {
            std::u32string out;
            for (int64_t i = b; step > 0 ? i < end : i > end; i += step) out += u[size_t(i)];
            return Value(encode(out));
        }
        List out;
        for (int64_t i = b; step > 0 ? i < end : i > end; i += step) out.push_back(subject.as_list()[size_t(i)]);
        return Value(std::move(out));
    }

    // `caller`, when defined, goes with the arguments under that name (a call block's body).
    Value call(const Expr& e, const Value& caller = Value()) {
        const Expr& callee = *e.args[0];
        Args a = eval_args(e, 1);
        if (!caller.is_undefined()) a.named.emplace_back("caller", caller);
        if (callee.kind == Expr::Attr) {
            const Value subject = eval(*callee.args[0]);
            need_defined(subject, e.line);
            if (subject.is_dict())
                if (const Value* f = find(subject.as_dict(), callee.name); f && f->is_function()) return invoke(*f, a, e.line);
            Value result;
            try {
                if (call_method(subject, callee.name, a, result)) return result;
            } catch (const TemplateError& err) {
                fail(e.line, err.what());
            }
            fail(e.line, type_name(subject) + " has no method '" + callee.name + "'");
        }
        const Value f = eval(callee);
        need_defined(f, e.line);
        if (!f.is_function()) fail(e.line, type_name(f) + " is not callable");
        return invoke(f, a, e.line);
    }

    Value invoke(const Value& f, Args& a, int line) {
        try {
            return f.as_function()(a);
        } catch (const TemplateError& err) {
            fail(line, err.what());
        }
    }

    Value binary(const Expr& e) {
        const std::string& op = e.name;
        const Value l = eval(*e.args[0]);
        const Value r = eval(*e.args[1]);
        if (op == "~") {
            std::string s = to_str(l) + to_str(r);
            if (s.size() > kMaxOutput) fail(e.line, "a string grows past the output limit");
            return Value(std::move(s));
        }
        if (op == "==") return Value(equals(l, r));
        if (op == "!=") return Value(!equals(l, r));
        if (op == "in" || op == "not in") {
            Args a;
            a.positional.push_back(r);
            need_defined(r, e.line);
            bool hit = false;
            try {
                hit = apply_test("in", l, a);
            } catch (const TemplateError& err) {
                fail(e.line, err.what());
            }
            return Value(op == "in" ? hit : !hit);
        }
        need_defined(l, e.line);
        need_defined(r, e.line);
        try {
            if (op == "<") return Value(less(l, r));
            if (op == ">") return Value(less(r, l));
            if (op == "<=") return Value(!less(r, l));
            if (op == ">=") return Value(!less(l, r));
        } catch (const TemplateError& err) {
            fail(e.line, err.what());
        }
        if (op == "+") {
            if (l.is_string() && r.is_string()) {
                if (l.as_string().size() + r.as_string().size() > kMaxOutput) fail(e.line, "a string grows past the output limit");
                return Value(l.as_string() + r.as_string());
            }
            if (l.is_list() && r.is_list()) {
                List out = l.as_list();
                out.insert(out.end(), r.as_list().begin(), r.as_list().end());
                return Value(std::move(out));
            }
        }
        if (op == "*" && (l.is_string() || l.is_list() || r.is_string() || r.is_list())) {
            const Value& seq = l.is_string() || l.is_list() ? l : r;
            const Value& times = &seq == &l ? r : l;
            if (!times.is_int() && !times.is_bool()) fail(e.line, "can only repeat by an integer");
            const int64_t k = std::max<int64_t>(0, times.is_int() ? times.as_int() : times.as_bool());
            const size_t unit = seq.is_string() ? seq.as_string().size() : seq.as_list().size();
            if (unit != 0 && uint64_t(k) > kMaxOutput / unit) fail(e.line, "a repeated value grows past the output limit");
            if (seq.is_string()) {
                std::string out;
                for (int64_t i = 0; i < k; ++i) out += seq.as_string();
                return Value(std::move(out));
            }
            List out;
            for (int64_t i = 0; i < k; ++i) out.insert(out.end(), seq.as_list().begin(), seq.as_list().end());
            return Value(std::move(out));
        }
        const bool numbers = (l.is_number() || l.is_bool()) && (r.is_number() || r.is_bool());
        if (!numbers) fail(e.line, "unsupported operand types for " + op + ": " + type_name(l) + " and " + type_name(r));
        const bool ints = !l.is_float() && !r.is_float();
        const double x = l.as_number(), y = r.as_number();
        if (ints && op != "/" && op != "**") {
            const int64_t a = l.is_bool() ? l.as_bool() : l.as_int(), b = r.is_bool() ? r.as_bool() : r.as_int();
            if (op == "+" || op == "-" || op == "*") {
                if (const auto out = checked(op, a, b)) return Value(*out);
                fail(e.line, "integer overflow");
            }
            if (op == "//" || op == "%") {
                if (b == 0) fail(e.line, "integer division or modulo by zero");
                if (a == INT64_MIN && b == -1) fail(e.line, "integer overflow");
                int64_t q = a / b, m = a % b;
                if (m != 0 && ((m < 0) != (b < 0))) --q, m += b;  // Python floors
                return Value(op == "//" ? q : m);
            }
        }
        if (op == "+") return Value(x + y);
        if (op == "-") return Value(x - y);
        if (op == "*") return Value(x * y);
        if (op == "/") {
            if (y == 0) fail(e.line, "division by zero");
            return Value(x / y);
        }
        if (op == "//" || op == "%") {
            if (y == 0) fail(e.line, "float division or modulo by zero");
            const double m = std::fmod(x, y);
            const double mod = (m != 0 && ((m < 0) != (y < 0))) ? m + y : m;
            return Value(op == "%" ? mod : std::floor(x / y));
        }
        if (op == "**") {
            if (ints && y >= 0) {
                const int64_t base = l.is_bool() ? l.as_bool() : l.as_int();
                const int64_t exponent = r.is_bool() ? r.as_bool() : r.as_int();
                if (base == 0 || base == 1) return Value(exponent == 0 ? int64_t(1) : base);
                if (base == -1) return Value(exponent % 2 ? int64_t(-1) : int64_t(1));
                int64_t result = 1;  // |base| >= 2 overflows within 63 steps
                for (int64_t i = 0; i < exponent; ++i) {
                    const auto next = checked("*", result, base);
                    if (!next) fail(e.line, "integer overflow");
                    result = *next;
                }
                return Value(result);
            }
            return Value(std::pow(x, y));
        }
        fail(e.line, "unknown operator " + op);
    }

    Dict globals_;
    const Dict& context_;
    std::vector<Dict> scopes_;
    std::string out_;
    size_t steps_ = 0;
    uint64_t built_ = 0;
    int depth_ = 0;
};

}  // namespace

Result<Template> Template::parse(std::string_view source) {
    try {
        Template t;
        t.nodes_ = std::make_shared<const std::vector<Node>>(jinja::parse(lex(source)));
        return t;
    } catch (const TemplateError& e) {
        return Error{e.what()};
    }
}

Result<std::string> Template::render(const Dict& context) const {
    try {
        return Renderer(context).run(*nodes_);
    } catch (const TemplateError& e) {
        return Error{e.what()};
    }
}

}  // namespace ember::jinja
