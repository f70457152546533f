#include "gguf/gguf_value.h"

namespace ember::gguf {

const char* value_type_name(ValueType type) {
    switch (type) {
        case ValueType::U8: return "u8";
        case ValueType::I8: return "i8";
        case ValueType::U16: return "u16";
        case ValueType::I16: return "i16";
        case ValueType::U32: return "u32";
        case ValueType::I32: return "i32";
        case ValueType::F32: return "f32";
        case ValueType::Bool: return "bool";
        case ValueType::String: return "string";
        case ValueType::Array: return "array";
        case ValueType::U64: return "u64";
        case ValueType::I64: return "i64";
        case ValueType::F64: return "f64";
    }
    return "unknown";
}

bool is_known_value_type(uint32_t raw) { return raw <= uint32_t(ValueType::F64); }

size_t scalar_size(ValueType type) {
    switch (type) {
        case ValueType::U8: case ValueType::I8: case ValueType::Bool: return 1;
        case ValueType::U16: case ValueType::I16: return 2;
        case ValueType::U32: case ValueType::I32: case ValueType::F32: return 4;
        case ValueType::U64: case ValueType::I64: case ValueType::F64: return 8;
        case ValueType::String: case ValueType::Array: return 0;
    }
    return 0;
}

size_t Array::size() const {
    if (elem == ValueType::String) return strings.size();
    if (elem == ValueType::F32 || elem == ValueType::F64) return floats.size();
    return ints.size();
}

}  // namespace ember::gguf
