#pragma once
// The values a chat template computes with, modelled on Python's, since templates are written
// against Python's Jinja: None, bools, ints, floats, strings, lists, dicts in insertion order,
// functions, and Undefined (a name that was never set).

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace ember::jinja {

// Thrown inside the module; Template catches it at its edge.
struct TemplateError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Value;
using List = std::vector<Value>;
using Dict = std::vector<std::pair<std::string, Value>>;
struct Args {
    std::vector<Value> positional;
    std::vector<std::pair<std::string, Value>> named;
};
using Function = std::function<Value(Args&)>;

struct Undefined {
    std::string name;  // for the error when it is used
};
struct None {};

struct Value {
    // Strings, lists and dicts are shared, so passing a long message around copies no text.
    std::variant<Undefined, None, bool, int64_t, double, std::shared_ptr<const std::string>, std::shared_ptr<List>,
                 std::shared_ptr<Dict>, std::shared_ptr<Function>>
        v;

    Value() = default;
    Value(None n) : v(n) {}
    Value(Undefined u) : v(std::move(u)) {}
    Value(bool b) : v(b) {}
    Value(int i) : v(int64_t(i)) {}
    Value(int64_t i) : v(i) {}
    Value(double d) : v(d) {}
    Value(std::string s) : v(std::make_shared<const std::string>(std::move(s))) {}
    Value(const char* s) : Value(std::string(s)) {}
    Value(List l) : v(std::make_shared<List>(std::move(l))) {}
    Value(Dict d) : v(std::make_shared<Dict>(std::move(d))) {}
    Value(Function f) : v(std::make_shared<Function>(std::move(f))) {}

    bool is_undefined() const { return v.index() == 0; }
    bool is_none() const { return v.index() == 1; }
    bool is_bool() const { return v.index() == 2; }
    bool is_int() const { return v.index() == 3; }
    bool is_float() const { return v.index() == 4; }
    bool is_number() const { return is_int() || is_float(); }
    bool is_string() const { return v.index() == 5; }
    bool is_list() const { return v.index() == 6; }
    bool is_dict() const { return v.index() == 7; }
    bool is_function() const { return v.index() == 8; }

    bool as_bool() const { return std::get<bool>(v); }
    int64_t as_int() const { return std::get<int64_t>(v); }
    double as_number() const { return is_int() ? double(as_int()) : is_bool() ? double(as_bool()) : std::get<double>(v); }
    const std::string& as_string() const { return *std::get<std::shared_ptr<const std::string>>(v); }
    List& as_list() const { return *std::get<std::shared_ptr<List>>(v); }
    Dict& as_dict() const { return *std::get<std::shared_ptr<Dict>>(v); }
    Function& as_function() const { return *std::get<std::shared_ptr<Function>>(v); }
};

// Python's bool(), str() and repr(); equality and ordering as Python compares.
bool truthy(const Value& v);
std::string to_str(const Value& v);
std::string repr(const Value& v);
bool equals(const Value& a, const Value& b);
bool less(const Value& a, const Value& b);  // throws for types Python cannot order
std::string type_name(const Value& v);

// A dict's entry, or nullptr.
const Value* find(const Dict& d, const std::string& key);
void set(Dict& d, const std::string& key, Value value);

// Strings are UTF-8; indexing, slicing and length count code points, as in Python.
std::u32string decode(const std::string& s);
std::string encode(const std::u32string& s);

}  // namespace ember::jinja
