#include "chat_template/jinja/parser.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <initializer_list>

namespace ember::jinja {
namespace {

// Deep enough for any real template; a hostile one stops here instead of exhausting the stack.
constexpr int kMaxDepth = 100;

using ExprPtr = std::unique_ptr<Expr>;

class Parser {
public:
    explicit Parser(const std::vector<Token>& tokens) : t_(tokens) {}

    std::vector<Node> run() {
        std::string end;
        std::vector<Node> nodes = parse_body({}, end);
        return nodes;
    }

private:
    const Token& peek(size_t ahead = 0) const { return t_[std::min(i_ + ahead, t_.size() - 1)]; }
    const Token& next() {
        const Token& t = t_[i_];
        if (i_ + 1 < t_.size()) ++i_;
        return t;
    }
    bool at_op(const char* op) const { return peek().kind == TokenKind::Operator && peek().text == op; }
    bool at_name(const char* name) const { return peek().kind == TokenKind::Name && peek().text == name; }
    bool accept_op(const char* op) {
        if (!at_op(op)) return false;
        next();
        return true;
    }
    bool accept_name(const char* name) {
        if (!at_name(name)) return false;
        next();
        return true;
    }

    [[noreturn]] void fail(const std::string& what) const {
        const Token& t = peek();
        std::string got = t.kind == TokenKind::End ? "the end of the template"
                          : t.kind == TokenKind::BlockEnd ? "%}"
                          : t.kind == TokenKind::VarEnd ? "}}"
                          : "'" + t.text + "'";
        throw TemplateError("line " + std::to_string(t.line) + ": " + what + ", found " + got);
    }
    void expect_op(const char* op) {
        if (!accept_op(op)) fail(std::string("expected '") + op + "'");
    }
    std::string expect_name(const char* what) {
        if (peek().kind != TokenKind::Name) fail(std::string("expected ") + what);
        return next().text;
    }
    void expect_block_end() {
        if (peek().kind != TokenKind::BlockEnd) fail("expected %}");
        next();
    }

    struct DepthGuard {
        explicit DepthGuard(Parser& p) : p_(p) {
            if (++p_.depth_ > kMaxDepth) p_.fail("the template nests deeper than " + std::to_string(kMaxDepth) + " levels");
        }
        ~DepthGuard() { --p_.depth_; }
        Parser& p_;
    };

    // Statements until one of `ends` (its tag name returned in `end`) or the end of input.
    std::vector<Node> parse_body(std::initializer_list<const char*> ends, std::string& end) {
        DepthGuard guard(*this);
        std::vector<Node> nodes;
        while (true) {
            const Token& t = peek();
            if (t.kind == TokenKind::End) {
                if (ends.size() != 0) fail(std::string("expected {% ") + *(ends.end() - 1) + " %}");
                end.clear();
                return nodes;
            }
            if (t.kind == TokenKind::Text) {
                nodes.push_back(Node{Node::Text, t.line, t.text, {}, {}, {}, {}, {}, {}, {}});
                next();
            } else if (t.kind == TokenKind::VarBegin) {
                next();
                Node n{Node::Output, t.line, {}, parse_expression(), {}, {}, {}, {}, {}, {}};
                if (peek().kind != TokenKind::VarEnd) fail("expected }}");
                next();
                nodes.push_back(std::move(n));
            } else if (t.kind == TokenKind::BlockBegin) {
                const Token& tag = peek(1);
                if (tag.kind == TokenKind::Name &&
                    std::any_of(ends.begin(), ends.end(), [&](const char* e) { return tag.text == e; })) {
                    next();
                    end = next().text;
                    return nodes;
                }
                next();
                nodes.push_back(parse_statement());
            } else {
                fail("unexpected token");
            }
        }
    }

    Node parse_statement() {
        const int line = peek().line;
        const std::string tag = expect_name("a statement name");
        Node n{Node::Text, line, {}, {}, {}, {}, {}, {}, {}, {}};
        if (tag == "if") {
            n.kind = Node::If;
            ExprPtr cond = parse_expression();
            expect_block_end();
            std::string end;
            while (true) {
                std::vector<Node> body = parse_body({"elif", "else", "endif"}, end);
                n.branches.emplace_back(std::move(cond), std::move(body));
                if (end != "elif") break;
                cond = parse_expression();
                expect_block_end();
            }
            if (end == "else") {
                expect_block_end();
                n.otherwise = parse_body({"endif"}, end);
            }
            expect_block_end();
        } else if (tag == "for") {
            n.kind = Node::For;
            do n.targets.push_back(expect_name("a loop variable"));
            while (accept_op(","));
            if (!accept_name("in")) fail("expected 'in'");
            n.expr = parse_expression(false);
            if (accept_name("if")) n.filter = parse_expression(false);
            if (accept_name("recursive")) fail("recursive loops are not supported");
            expect_block_end();
            std::string end;
            n.body = parse_body({"else", "endfor"}, end);
            if (end == "else") {
                expect_block_end();
                n.otherwise = parse_body({"endfor"}, end);
            }
            expect_block_end();
        } else if (tag == "set") {
            n.targets.push_back(expect_name("a variable name"));
            if (accept_op(".")) n.targets.push_back(expect_name("an attribute name"));
            if (accept_op("=")) {
                n.kind = Node::Set;
                n.expr = parse_expression();
                expect_block_end();
            } else {
                n.kind = Node::SetBlock;
                expect_block_end();
                std::string end;
                n.body = parse_body({"endset"}, end);
                expect_block_end();
            }
        } else if (tag == "generation") {
            // Hugging Face's marker for assistant-token masks: renders its body as is.
            expect_block_end();
            std::string end;
            Node block{Node::If, line, {}, {}, {}, {}, {}, {}, {}, {}};
            auto always = std::make_unique<Expr>();
            always->kind = Expr::Literal;
            always->literal = Value(true);
            block.branches.emplace_back(std::move(always), parse_body({"endgeneration"}, end));
            expect_block_end();
            return block;
        } else if (tag == "macro") {
            n.kind = Node::Macro;
            n.text = expect_name("a macro name");
            parse_parameters(n);
            expect_block_end();
            std::string end;
            n.body = parse_body({"endmacro"}, end);
            expect_block_end();
        } else if (tag == "call") {
            // {% call(params) macro(args) %}body{% endcall %}: the macro gets the body as caller().
            n.kind = Node::CallBlock;
            if (at_op("(")) parse_parameters(n);
            n.expr = parse_expression();
            if (n.expr->kind != Expr::Call) fail("expected a macro call after 'call'");
            expect_block_end();
            std::string end;
            n.body = parse_body({"endcall"}, end);
            expect_block_end();
        } else if (tag == "filter") {
            // {% filter f(args) | g %}body{% endfilter %}: the rendered body through the filters.
            n.kind = Node::FilterBlock;
            auto body = make(Expr::Name, line);
            body->name = kFilterBody;
            auto first = make(Expr::Filter, line);
            first->name = expect_name("a filter name");
            first->args.push_back(std::move(body));
            if (at_op("(")) parse_call_args(*first);
            n.expr = parse_filters(std::move(first));
            expect_block_end();
            std::string end;
            n.body = parse_body({"endfilter"}, end);
            expect_block_end();
        } else if (tag == "break" || tag == "continue") {
            n.kind = tag == "break" ? Node::Break : Node::Continue;
            expect_block_end();
        } else {
            throw TemplateError("line " + std::to_string(line) + ": unknown or unsupported statement '" + tag + "'");
        }
        return n;
    }

    // "(a, b=default, …)" of a macro or a call block.
    void parse_parameters(Node& n) {
        expect_op("(");
        while (!at_op(")")) {
            n.targets.push_back(expect_name("a parameter name"));
            n.defaults.push_back(accept_op("=") ? parse_expression() : nullptr);
            if (!accept_op(",")) break;
        }
        expect_op(")");
    }

    ExprPtr make(Expr::Kind kind, int line) {
        auto e = std::make_unique<Expr>();
        e->kind = kind;
        e->line = line;
        return e;
    }

    ExprPtr parse_expression(bool allow_conditional = true) {
        DepthGuard guard(*this);
        ExprPtr e = parse_or();
        while (allow_conditional && at_name("if")) {
            const int line = next().line;
            auto c = make(Expr::Conditional, line);
            ExprPtr cond = parse_or();
            ExprPtr otherwise;
            if (accept_name("else")) otherwise = parse_expression();
            c->args.push_back(std::move(cond));
            c->args.push_back(std::move(e));
            c->args.push_back(std::move(otherwise));
            e = std::move(c);
        }
        return e;
    }

    ExprPtr binary(Expr::Kind kind, const std::string& op, ExprPtr l, ExprPtr r, int line) {
        auto e = make(kind, line);
        e->name = op;
        e->args.push_back(std::move(l));
        e->args.push_back(std::move(r));
        return e;
    }

    ExprPtr parse_or() {
        ExprPtr e = parse_and();
        while (at_name("or")) {
            const int line = next().line;
            e = binary(Expr::Or, "or", std::move(e), parse_and(), line);
        }
        return e;
    }

    ExprPtr parse_and() {
        ExprPtr e = parse_not();
        while (at_name("and")) {
            const int line = next().line;
            e = binary(Expr::And, "and", std::move(e), parse_not(), line);
        }
        return e;
    }

    ExprPtr parse_not() {
        if (at_name("not")) {
            DepthGuard guard(*this);
            auto e = make(Expr::Not, next().line);
            e->args.push_back(parse_not());
            return e;
        }
        return parse_compare();
    }

    ExprPtr parse_compare() {
        std::vector<ExprPtr> operands;
        std::vector<std::pair<std::string, int>> ops;
        operands.push_back(parse_math1());
        while (true) {
            const int line = peek().line;
            if (at_op("==") || at_op("!=") || at_op("<") || at_op(">") || at_op("<=") || at_op(">=")) {
                ops.emplace_back(next().text, line);
            } else if (at_name("in")) {
                next();
                ops.emplace_back("in", line);
            } else if (at_name("not") && peek(1).kind == TokenKind::Name && peek(1).text == "in") {
                next();
                next();
                ops.emplace_back("not in", line);
            } else {
                break;
            }
            operands.push_back(parse_math1());
        }
        if (ops.empty()) return std::move(operands[0]);
        // a < b < c is a < b and b < c, as in Python (the middle operand is evaluated twice).
        ExprPtr chain;
        for (size_t k = 0; k < ops.size(); ++k) {
            ExprPtr left = std::move(operands[k]);
            ExprPtr link = binary(Expr::Binary, ops[k].first, std::move(left), std::move(operands[k + 1]), ops[k].second);
            if (k + 1 < ops.size()) operands[k + 1] = clone(*link->args[1]);
            chain = chain ? binary(Expr::And, "and", std::move(chain), std::move(link), ops[k].second) : std::move(link);
        }
        return chain;
    }

    ExprPtr clone(const Expr& e) {
        auto c = make(e.kind, e.line);
        c->literal = e.literal;
        c->name = e.name;
        c->negated = e.negated;
        for (const ExprPtr& a : e.args) c->args.push_back(a ? clone(*a) : nullptr);
        for (const auto& [k, v] : e.named) c->named.emplace_back(k, clone(*v));
        return c;
    }

    ExprPtr parse_math1() {
        ExprPtr e = parse_concat();
        while (at_op("+") || at_op("-")) {
            const Token& t = next();
            e = binary(Expr::Binary, t.text, std::move(e), parse_concat(), t.line);
        }
        return e;
    }

    ExprPtr parse_concat() {
        ExprPtr e = parse_math2();
        while (at_op("~")) {
            const int line = next().line;
            e = binary(Expr::Binary, "~", std::move(e), parse_math2(), line);
        }
        return e;
    }

    ExprPtr parse_math2() {
        ExprPtr e = parse_pow();
        while (at_op("*") || at_op("/") || at_op("//") || at_op("%")) {
            const Token& t = next();
            e = binary(Expr::Binary, t.text, std::move(e), parse_pow(), t.line);
        }
        return e;
    }

    ExprPtr parse_pow() {
        ExprPtr e = parse_unary(true);
        while (at_op("**")) {
            const int line = next().line;
            e = binary(Expr::Binary, "**", std::move(e), parse_unary(true), line);
        }
        return e;
    }

    ExprPtr parse_unary(bool with_filter) {
        DepthGuard guard(*this);
        ExprPtr e;
        if (at_op("-") || at_op("+")) {
            const Token& t = next();
            ExprPtr operand = parse_unary(false);
            if (t.text == "-") {
                e = make(Expr::Negate, t.line);
                e->args.push_back(std::move(operand));
            } else {
                e = std::move(operand);
            }
        } else {
            e = parse_primary();
        }
        e = parse_postfix(std::move(e));
        if (with_filter) e = parse_filters(std::move(e));
        return e;
    }

    ExprPtr parse_primary() {
        const Token& t = peek();
        switch (t.kind) {
            case TokenKind::Name: {
                next();
                auto e = make(Expr::Literal, t.line);
                if (t.text == "true" || t.text == "True") e->literal = Value(true);
                else if (t.text == "false" || t.text == "False") e->literal = Value(false);
                else if (t.text == "none" || t.text == "None") e->literal = Value(None{});
                else {
                    e->kind = Expr::Name;
                    e->name = t.text;
                }
                return e;
            }
            case TokenKind::String: {
                auto e = make(Expr::Literal, t.line);
                std::string s;
                while (peek().kind == TokenKind::String) s += next().text;  // adjacent literals join
                e->literal = Value(std::move(s));
                return e;
            }
            case TokenKind::Integer: {
                next();
                auto e = make(Expr::Literal, t.line);
                int64_t v = 0;
                auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
                if (ec != std::errc()) throw TemplateError("line " + std::to_string(t.line) + ": integer " + t.text + " is too large");
                e->literal = Value(v);
                return e;
            }
            case TokenKind::Float: {
                next();
                auto e = make(Expr::Literal, t.line);
                e->literal = Value(std::strtod(t.text.c_str(), nullptr));
                return e;
            }
            case TokenKind::Operator:
                if (t.text == "(") {
                    next();
                    ExprPtr e = parse_expression();
                    if (at_op(",")) {  // a tuple: behaves as a list
                        auto list = make(Expr::ListLit, t.line);
                        list->args.push_back(std::move(e));
                        while (accept_op(",") && !at_op(")")) list->args.push_back(parse_expression());
                        e = std::move(list);
                    }
                    expect_op(")");
                    return e;
                }
                if (t.text == "[") {
                    next();
                    auto list = make(Expr::ListLit, t.line);
                    while (!at_op("]")) {
                        list->args.push_back(parse_expression());
                        if (!accept_op(",")) break;
                    }
                    expect_op("]");
                    return list;
                }
                if (t.text == "{") {
                    next();
                    auto dict = make(Expr::DictLit, t.line);
                    while (!at_op("}")) {
                        dict->args.push_back(parse_expression());
                        expect_op(":");
                        dict->args.push_back(parse_expression());
                        if (!accept_op(",")) break;
                    }
                    expect_op("}");
                    return dict;
                }
                break;
            default: break;
        }
        fail("expected a value");
    }

    ExprPtr parse_postfix(ExprPtr e) {
        while (true) {
            const int line = peek().line;
            if (accept_op(".")) {
                auto a = make(Expr::Attr, line);
                a->args.push_back(std::move(e));
                if (peek().kind == TokenKind::Integer) {  // x.0 is x[0]
                    a->kind = Expr::Item;
                    a->args.push_back(parse_primary());
                } else {
                    a->name = expect_name("an attribute name");
                }
                e = std::move(a);
            } else if (accept_op("[")) {
                ExprPtr parts[3];
                bool slice = false;
                for (int k = 0; k < 3; ++k) {
                    if (!at_op(":") && !at_op("]")) parts[k] = parse_expression();
                    if (k < 2 && accept_op(":")) slice = true;
                    else break;
                }
                expect_op("]");
                auto s = make(slice ? Expr::Slice : Expr::Item, line);
                s->args.push_back(std::move(e));
                if (!slice && !parts[0]) fail("expected an index");
                s->args.push_back(std::move(parts[0]));
                if (slice) {
                    s->args.push_back(std::move(parts[1]));
                    s->args.push_back(std::move(parts[2]));
                }
                e = std::move(s);
            } else if (at_op("(")) {
                auto c = make(Expr::Call, line);
                c->args.push_back(std::move(e));
                parse_call_args(*c);
                e = std::move(c);
            } else {
                return e;
            }
        }
    }

    void parse_call_args(Expr& call) {
        expect_op("(");
        while (!at_op(")")) {
            if (peek().kind == TokenKind::Name && peek(1).kind == TokenKind::Operator && peek(1).text == "=") {
                std::string name = next().text;
                next();
                call.named.emplace_back(std::move(name), parse_expression());
            } else {
                if (!call.named.empty()) fail("a positional argument follows a named one");
                call.args.push_back(parse_expression());
            }
            if (!accept_op(",")) break;
        }
        expect_op(")");
    }

    ExprPtr parse_filters(ExprPtr e) {
        while (true) {
            const int line = peek().line;
            if (accept_op("|")) {
                auto f = make(Expr::Filter, line);
                f->name = expect_name("a filter name");
                f->args.push_back(std::move(e));
                if (at_op("(")) parse_call_args(*f);
                e = std::move(f);
            } else if (accept_name("is")) {
                auto t = make(Expr::Test, line);
                t->negated = accept_name("not");
                t->name = expect_name("a test name");
                t->args.push_back(std::move(e));
                if (at_op("(")) {
                    parse_call_args(*t);
                } else if (starts_bare_argument()) {
                    t->args.push_back(parse_unary(false));
                }
                e = std::move(t);
            } else {
                return e;
            }
        }
    }

    // "x is divisibleby 3", "x is sameas none": a test's single argument may follow without parentheses.
    bool starts_bare_argument() const {
        const Token& t = peek();
        if (t.kind == TokenKind::String || t.kind == TokenKind::Integer || t.kind == TokenKind::Float) return true;
        if (t.kind != TokenKind::Name) return false;
        static const char* const keywords[] = {"and", "or", "not", "in", "is", "if", "else"};
        return std::none_of(std::begin(keywords), std::end(keywords), [&](const char* k) { return t.text == k; });
    }

    const std::vector<Token>& t_;
    size_t i_ = 0;
    int depth_ = 0;
};

}  // namespace

std::vector<Node> parse(const std::vector<Token>& tokens) { return Parser(tokens).run(); }

}  // namespace ember::jinja
