#pragma once
// Jinja's filters and tests, Python's string and dict methods, and the global functions chat
// templates call (range, namespace, raise_exception, strftime_now), as Hugging Face provides them.

#include <string>

#include "chat_template/jinja/value.h"

namespace ember::jinja {

Value apply_filter(const std::string& name, const Value& subject, Args& args);
bool apply_test(const std::string& name, const Value& subject, Args& args);
// nullopt-like: returns false when `subject` has no method `name`.
bool call_method(const Value& subject, const std::string& name, Args& args, Value& result);
Dict make_globals();

// json.dumps as Hugging Face's tojson calls it: insertion order, non-ASCII kept.
std::string to_json(const Value& v, int indent);

}  // namespace ember::jinja
