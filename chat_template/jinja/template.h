#pragma once
// A Jinja template as chat models ship them (tokenizer.chat_template), parsed once and rendered
// per prompt. The interpreter is sandboxed the way Hugging Face's is: no attribute of a Python
// object, no I/O, no mutation of the values passed in; on top of that it bounds the work a
// hostile template can ask for (nesting, loop steps, output size).

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "chat_template/jinja/value.h"
#include "ember/result.h"

namespace ember::jinja {

struct Node;

class Template {
public:
    // Errors name the line and what is wrong, e.g. "line 3: unknown or unsupported statement 'macro'".
    static Result<Template> parse(std::string_view source);

    // `context` is a dict of the template's variables. Errors name the line; a template's own
    // raise_exception() comes back as "the template refused: <its message>".
    Result<std::string> render(const Dict& context) const;

private:
    std::shared_ptr<const std::vector<Node>> nodes_;
};

}  // namespace ember::jinja
