#include "chat_template/chat_template.h"

#include <algorithm>

namespace ember::chat {

const std::string_view kChatMlTemplate =
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

Result<ChatTemplate> ChatTemplate::parse(std::string_view source, std::string bos_token, std::string eos_token) {
    if (source.find_first_not_of(" \t\r\n") == std::string_view::npos) return Error{"the model has no chat template"};
    auto parsed = jinja::Template::parse(source);
    if (!parsed) return parsed.error();
    return ChatTemplate(std::move(parsed.value()), std::move(bos_token), std::move(eos_token));
}

Result<std::string> ChatTemplate::run(const std::vector<Message>& messages, bool add_generation_prompt) const {
    jinja::List list;
    for (const Message& m : messages)
        list.push_back(jinja::Value(jinja::Dict{{"role", jinja::Value(m.role)}, {"content", jinja::Value(m.content)}}));
    const jinja::Dict context{{"messages", jinja::Value(std::move(list))},
                              {"add_generation_prompt", jinja::Value(add_generation_prompt)},
                              {"bos_token", jinja::Value(bos_token_)},
                              {"eos_token", jinja::Value(eos_token_)},
                              {"tools", jinja::Value(jinja::None{})}};
    return template_.render(context);
}

Result<std::string> ChatTemplate::render(const std::vector<Message>& messages, bool add_generation_prompt) const {
    auto out = run(messages, add_generation_prompt);
    if (out || messages.empty() || messages.front().role != "system") return out;
    std::vector<Message> merged(messages.begin() + 1, messages.end());
    const auto first_user = std::find_if(merged.begin(), merged.end(), [](const Message& m) { return m.role == "user"; });
    if (first_user == merged.end()) return out;
    first_user->content = messages.front().content + "\n\n" + first_user->content;
    auto retried = run(merged, add_generation_prompt);
    return retried ? retried : out;
}

}  // namespace ember::chat
