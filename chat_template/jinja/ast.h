#pragma once
// The parsed template: statements holding expressions, as the parser builds them and the
// renderer walks them.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat_template/jinja/value.h"

namespace ember::jinja {

struct Expr {
    enum Kind {
        Literal, Name, Attr, Item, Slice, Call, Filter, Test, Not, Negate, Binary, And, Or, Conditional, ListLit, DictLit
    };
    Kind kind;
    int line = 0;
    Value literal;
    std::string name;  // Name, Attr, Filter and Test names; Binary's operator
    // Operands. Attr/Item/Slice/Filter/Test: the subject first; Call: the callee first;
    // Slice: subject, start, stop, step (null when left out); DictLit: key, value, key, value…
    std::vector<std::unique_ptr<Expr>> args;
    std::vector<std::pair<std::string, std::unique_ptr<Expr>>> named;
    bool negated = false;  // "is not"
};

// The name a filter block's filters read its rendered body from: not an identifier, so no
// template can name it.
inline const std::string kFilterBody = " filter body";

struct Node {
    enum Kind { Text, Output, If, For, Set, SetBlock, Break, Continue, Macro, FilterBlock, CallBlock };
    Kind kind;
    int line = 0;
    std::string text;                  // Text; Macro's name
    std::unique_ptr<Expr> expr;        // Output's value, For's iterable, Set's value; FilterBlock's filters
                                       // (applied to the name kFilterBody); CallBlock's macro call
    std::vector<std::string> targets;  // For: loop variables; Set/SetBlock: name, or name and attribute;
                                       // Macro, CallBlock: parameters (CallBlock: of caller())
    std::vector<std::unique_ptr<Expr>> defaults;  // Macro, CallBlock: each parameter's default (null: none)
    std::unique_ptr<Expr> filter;      // For … if filter
    std::vector<std::pair<std::unique_ptr<Expr>, std::vector<Node>>> branches;  // If: condition and body
    std::vector<Node> body;            // For, SetBlock, Macro, FilterBlock, CallBlock
    std::vector<Node> otherwise;       // If's else, For's else
};

}  // namespace ember::jinja
