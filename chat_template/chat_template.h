#pragma once
// A model's chat template (tokenizer.chat_template, Jinja) run over a conversation the way Hugging
// Face's apply_chat_template runs it: messages as {role, content}, bos_token, eos_token,
// add_generation_prompt. Plain C++, shared by the app and the API server.

#include <string>
#include <string_view>
#include <vector>

#include "chat_template/jinja/template.h"
#include "ember/result.h"

namespace ember::chat {

struct Message {
    std::string role;  // "system", "user", "assistant", or whatever the template knows
    std::string content;
};

// ChatML, the format llama.cpp's server falls back to for a model without a template.
extern const std::string_view kChatMlTemplate;

class ChatTemplate {
public:
    // Errors say why the source does not parse, naming the line; an empty source is an error too.
    static Result<ChatTemplate> parse(std::string_view source, std::string bos_token, std::string eos_token);

    // A template that refuses a system message (Mistral's, Gemma's) gets the system message's
    // text at the head of the first user message instead, as those models are prompted.
    Result<std::string> render(const std::vector<Message>& messages, bool add_generation_prompt) const;

private:
    ChatTemplate(jinja::Template t, std::string bos, std::string eos)
        : template_(std::move(t)), bos_token_(std::move(bos)), eos_token_(std::move(eos)) {}
    Result<std::string> run(const std::vector<Message>& messages, bool add_generation_prompt) const;

    jinja::Template template_;
    std::string bos_token_;
    std::string eos_token_;
};

}  // namespace ember::chat
