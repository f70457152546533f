#include "chat_template/jinja/lexer.h"

#include <algorithm>

#include "chat_template/jinja/value.h"

namespace ember::jinja {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
public:
    explicit Lexer(std::string_view src) : src_(src) {
        // Jinja drops one newline at the very end of a template (keep_trailing_newline is off).
        if (src_.size() >= 1 && src_.back() == '\n') src_.remove_suffix(src_.size() >= 2 && src_[src_.size() - 2] == '\r' ? 2 : 1);
    }

    std::vector<Token> run() {
        bool strip_next_text = false;  // the previous tag ended with "-"
        while (pos_ < src_.size()) {
            size_t open = find_open(pos_);
            std::string text(src_.substr(pos_, open - pos_));
            if (strip_next_text) text.erase(0, std::find_if_not(text.begin(), text.end(), is_space) - text.begin());
            strip_next_text = false;
            if (open == src_.size()) {
                emit_text(std::move(text), line_);
                break;
            }
            const char kind = src_[open + 1];  // '{', '%' or '#'
            const char marker = open + 2 < src_.size() ? src_[open + 2] : '\0';
            if (marker == '-') {
                text.erase(std::find_if_not(text.rbegin(), text.rend(), is_space).base(), text.end());
            } else if (kind != '{' && marker != '+') {
                lstrip_line(text);
            }
            const int text_line = line_;
            count_lines(pos_, open);
            emit_text(std::move(text), text_line);
            pos_ = open + 2 + (marker == '-' || marker == '+' ? 1 : 0);
            bool stripped_end = false;
            if (kind == '#') stripped_end = skip_comment();
            else stripped_end = lex_tag(kind == '{' ? "}}" : "%}", kind == '{');
            strip_next_text = stripped_end;
            if (!stripped_end && kind != '{' && pos_ < src_.size() && src_[pos_] == '\n') {
                ++pos_;  // trim_blocks
                ++line_;
            }
        }
        tokens_.push_back(Token{TokenKind::End, {}, line_});
        return std::move(tokens_);
    }

private:
    size_t find_open(size_t from) const {
        for (size_t i = from; i + 1 < src_.size(); ++i)
            if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
        return src_.size();
    }

    // lstrip_blocks: spaces and tabs between the start of a line and a block tag go.
    void lstrip_line(std::string& text) const {
        const size_t nl = text.find_last_of('\n');
        const size_t line_start = nl == std::string::npos ? 0 : nl + 1;
        if (nl == std::string::npos && !(pos_ == 0 || src_[pos_ - 1] == '\n')) return;
        if (std::all_of(text.begin() + std::ptrdiff_t(line_start), text.end(), [](char c) { return c == ' ' || c == '\t'; }))
            text.erase(line_start);
    }

    void count_lines(size_t from, size_t to) {
        line_ += int(std::count(src_.begin() + std::ptrdiff_t(from), src_.begin() + std::ptrdiff_t(to), '\n'));
    }

    void emit_text(std::string text, int line) {
        if (!text.empty()) tokens_.push_back(Token{TokenKind::Text, std::move(text), line});
    }

    [[noreturn]] void fail(const std::string& what) const {
        throw TemplateError("line " + std::to_string(line_) + ": " + what);
    }

    bool skip_comment() {
        const size_t close = src_.find("#}", pos_);
        if (close == std::string_view::npos) fail("comment {# is never closed");
        const bool strip = close > pos_ && src_[close - 1] == '-';
        count_lines(pos_, close);
        pos_ = close + 2;
        return strip;
    }

    // Returns whether the tag ended with "-".
    bool lex_tag(std::string_view close, bool variable) {
        tokens_.push_back(Token{variable ? TokenKind::VarBegin : TokenKind::BlockBegin, {}, line_});
        while (true) {
            while (pos_ < src_.size() && is_space(src_[pos_])) {
                if (src_[pos_] == '\n') ++line_;
                ++pos_;
            }
            if (pos_ >= src_.size()) fail(std::string("tag is never closed with ") + std::string(close));
            const bool dash = src_[pos_] == '-' && src_.substr(pos_ + 1, 2) == close;
            const bool plus = src_[pos_] == '+' && src_.substr(pos_ + 1, 2) == close && !variable;
            if (dash || plus || src_.substr(pos_, 2) == close) {
                pos_ += (dash || plus ? 1 : 0) + 2;
                tokens_.push_back(Token{variable ? TokenKind::VarEnd : TokenKind::BlockEnd, {}, line_});
                return dash;
            }
            lex_token();
        }
    }

    void lex_token() {
        const char c = src_[pos_];
        if (is_name_start(c)) {
            const size_t start = pos_;
            while (pos_ < src_.size() && (is_name_start(src_[pos_]) || is_digit(src_[pos_]))) ++pos_;
            tokens_.push_back(Token{TokenKind::Name, std::string(src_.substr(start, pos_ - start)), line_});
        } else if (is_digit(c)) {
            const size_t start = pos_;
            bool is_float = false;
            while (pos_ < src_.size() && (is_digit(src_[pos_]) || src_[pos_] == '_')) ++pos_;
            if (pos_ + 1 < src_.size() && src_[pos_] == '.' && is_digit(src_[pos_ + 1])) {
                is_float = true;
                ++pos_;
                while (pos_ < src_.size() && is_digit(src_[pos_])) ++pos_;
            }
            if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
                size_t p = pos_ + 1;
                if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
                if (p < src_.size() && is_digit(src_[p])) {
                    is_float = true;
                    pos_ = p;
                    while (pos_ < src_.size() && is_digit(src_[pos_])) ++pos_;
                }
            }
            std::string number(src_.substr(start, pos_ - start));
            number.erase(std::remove(number.begin(), number.end(), '_'), number.end());
            tokens_.push_back(Token{is_float ? TokenKind::Float : TokenKind::Integer, std::move(number), line_});
        } else if (c == '\'' || c == '"') {
            tokens_.push_back(Token{TokenKind::String, lex_string(c), line_});
        } else {
            static const char* const ops[] = {"**", "//", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "<", ">",
                                              "(", ")", "[", "]", "{", "}", ",", ".", ":", "|", "="};
            for (const char* op : ops) {
                const std::string_view o(op);
                if (src_.substr(pos_, o.size()) == o) {
                    tokens_.push_back(Token{TokenKind::Operator, std::string(o), line_});
                    pos_ += o.size();
                    return;
                }
            }
            fail(std::string("unexpected character '") + c + "' in a tag");
        }
    }

    std::string lex_string(char quote) {
        std::string out;
        ++pos_;
        while (true) {
            if (pos_ >= src_.size()) fail("string is never closed");
            const char c = src_[pos_++];
            if (c == quote) return out;
            if (c == '\n') ++line_;
            if (c != '\\') {
                out += c;
                continue;
            }
            if (pos_ >= src_.size()) fail("string is never closed");
            const char e = src_[pos_++];
            switch (e) {
                case 'n': out += '\n'; break;
                case 't': out += '\t'; break;
                case 'r': out += '\r'; break;
                case '0': out += '\0'; break;
                case '\\': case '\'': case '"': out += e; break;
                case 'u': case 'x': {
                    const size_t digits = e == 'u' ? 4 : 2;
                    if (pos_ + digits > src_.size()) fail("bad \\" + std::string(1, e) + " escape in a string");
                    char32_t cp = 0;
                    for (size_t i = 0; i < digits; ++i) {
                        const char h = src_[pos_ + i];
                        const int d = is_digit(h) ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                                                            : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
                        if (d < 0) fail("bad \\" + std::string(1, e) + " escape in a string");
                        cp = cp * 16 + char32_t(d);
                    }
                    pos_ += digits;
                    out += encode(std::u32string(1, cp));
                    break;
                }
                default:  // Python keeps unknown escapes as written
                    out += '\\';
                    out += e;
            }
        }
    }

    std::string_view src_;
    size_t pos_ = 0;
    int line_ = 1;
    std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> lex(std::string_view source) { return Lexer(source).run(); }

}  // namespace ember::jinja
