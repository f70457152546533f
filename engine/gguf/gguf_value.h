#pragma once
// GGUF metadata values: every scalar type, strings, and one-level arrays.

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace ember::gguf {

enum class ValueType : uint32_t {
    U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7,
    String = 8, Array = 9, U64 = 10, I64 = 11, F64 = 12,
};

const char* value_type_name(ValueType type);
bool is_known_value_type(uint32_t raw);
// Bytes of one scalar element; 0 for String and Array.
size_t scalar_size(ValueType type);

struct Array {
    ValueType elem = ValueType::U8;
    std::vector<std::string> strings;  // elem == String
    std::vector<int64_t> ints;         // integer and bool elements (u64 stored bit-for-bit)
    std::vector<double> floats;        // F32 / F64 elements
    size_t size() const;
};

struct Value {
    ValueType type = ValueType::U8;
    std::variant<int64_t, double, bool, std::string, Array> data;  // ints hold u64 bit-for-bit

    static Value u32(uint32_t v) { return {ValueType::U32, int64_t(v)}; }
    static Value i32(int32_t v) { return {ValueType::I32, int64_t(v)}; }
    static Value u64(uint64_t v) { return {ValueType::U64, int64_t(v)}; }
    static Value f32(float v) { return {ValueType::F32, double(v)}; }
    static Value boolean(bool v) { return {ValueType::Bool, v}; }
    static Value string(std::string v) { return {ValueType::String, std::move(v)}; }
    static Value array(Array a) { return {ValueType::Array, std::move(a)}; }
};

}  // namespace ember::gguf
