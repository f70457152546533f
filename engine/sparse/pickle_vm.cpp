#include "sparse/pickle_vm.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <unordered_map>

#include "common/error.h"

namespace ember::sparse {
namespace {

// ---- values -------------------------------------------------------------------------------

enum class Kind { None, Bool, Int, Float, Str, Global, Tuple, List, Dict, Storage, Tensor };
enum class Callable { RebuildTensorV2, OrderedDict, Storage };

struct Value;
using ValuePtr = std::shared_ptr<const Value>;

// Values are immutable once built and shared between stack and memo. Lists and dicts are
// opaque: nothing in a single-tensor pickle reads their contents (backward hooks, metadata).
struct Value {
    Kind kind = Kind::None;
    int64_t i = 0;                 // Bool, Int
    std::string s;                 // Str; Global: "module.name"
    Callable callable{};           // Global
    std::vector<ValuePtr> items;   // Tuple
    int depth = 0;                 // tuple nesting below this value
    TensorRecord rec;              // Storage (type, key, location, numel), Tensor (all)
};

constexpr StorageType kStorageTypes[] = {StorageType::Float, StorageType::Double, StorageType::Half,
                                         StorageType::BFloat16, StorageType::Long, StorageType::Int,
                                         StorageType::Short, StorageType::Char, StorageType::Byte,
                                         StorageType::Bool};

// Opcode names for error messages; nullptr for bytes that are no pickle opcode at all.
const char* opcode_name(uint8_t op) {
    switch (op) {
    case '(': return "MARK";          case '.': return "STOP";            case '0': return "POP";
    case '1': return "POP_MARK";      case '2': return "DUP";             case 'F': return "FLOAT";
    case 'I': return "INT";           case 'J': return "BININT";          case 'K': return "BININT1";
    case 'L': return "LONG";          case 'M': return "BININT2";         case 'N': return "NONE";
    case 'P': return "PERSID";        case 'Q': return "BINPERSID";       case 'R': return "REDUCE";
    case 'S': return "STRING";        case 'T': return "BINSTRING";       case 'U': return "SHORT_BINSTRING";
    case 'V': return "UNICODE";       case 'X': return "BINUNICODE";      case 'a': return "APPEND";
    case 'b': return "BUILD";         case 'c': return "GLOBAL";          case 'd': return "DICT";
    case '}': return "EMPTY_DICT";    case 'e': return "APPENDS";         case 'g': return "GET";
    case 'h': return "BINGET";        case 'i': return "INST";            case 'j': return "LONG_BINGET";
    case 'l': return "LIST";          case ']': return "EMPTY_LIST";      case 'o': return "OBJ";
    case 'p': return "PUT";           case 'q': return "BINPUT";          case 'r': return "LONG_BINPUT";
    case 's': return "SETITEM";       case 't': return "TUPLE";           case ')': return "EMPTY_TUPLE";
    case 'u': return "SETITEMS";      case 'G': return "BINFLOAT";        case 'B': return "BINBYTES";
    case 'C': return "SHORT_BINBYTES";
    case 0x80: return "PROTO";        case 0x81: return "NEWOBJ";         case 0x82: return "EXT1";
    case 0x83: return "EXT2";         case 0x84: return "EXT4";           case 0x85: return "TUPLE1";
    case 0x86: return "TUPLE2";       case 0x87: return "TUPLE3";         case 0x88: return "NEWTRUE";
    case 0x89: return "NEWFALSE";     case 0x8a: return "LONG1";          case 0x8b: return "LONG4";
    case 0x8c: return "SHORT_BINUNICODE"; case 0x8d: return "BINUNICODE8"; case 0x8e: return "BINBYTES8";
    case 0x8f: return "EMPTY_SET";    case 0x90: return "ADDITEMS";       case 0x91: return "FROZENSET";
    case 0x92: return "NEWOBJ_EX";    case 0x93: return "STACK_GLOBAL";   case 0x94: return "MEMOIZE";
    case 0x95: return "FRAME";        case 0x96: return "BYTEARRAY8";     case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    default: return nullptr;
    }
}

std::string hex8(uint8_t v) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02x", v);
    return buf;
}

// A string from the file, made safe to print: non-printable bytes as '?', at most 80 bytes.
std::string printable(const std::string& s) {
    std::string out;
    for (char ch : s.substr(0, 80)) out += (ch >= 0x20 && ch < 0x7f) ? ch : '?';
    if (s.size() > 80) out += "...";
    return out;
}

std::string describe(const Value& v) {
    switch (v.kind) {
    case Kind::None: return "None";
    case Kind::Bool: return v.i ? "True" : "False";
    case Kind::Int: return "int " + std::to_string(v.i);
    case Kind::Float: return "float";
    case Kind::Str: return "str '" + printable(v.s) + "'";
    case Kind::Global: return "global '" + v.s + "'";
    case Kind::Tuple: return "tuple of " + std::to_string(v.items.size());
    case Kind::List: return "list";
    case Kind::Dict: return "dict";
    case Kind::Storage: return std::string(storage_type_name(v.rec.storage_type)) + " '" + printable(v.rec.storage_key) + "'";
    case Kind::Tensor: return "tensor";
    }
    return "?";
}

ValuePtr make(Kind kind) {
    auto v = std::make_shared<Value>();
    v->kind = kind;
    return v;
}

ValuePtr make_int(Kind kind, int64_t i) {
    auto v = std::make_shared<Value>();
    v->kind = kind;
    v->i = i;
    return v;
}

// ---- the machine --------------------------------------------------------------------------

class Machine {
public:
    Machine(std::span<const uint8_t> bytes, const std::string& what, const PickleLimits& limits)
        : b_(bytes), what_(what), lim_(limits) {}

    TensorRecord run() {
        if (b_.size() > lim_.max_bytes)
            fail(what_ + ": pickle is " + std::to_string(b_.size()) + " bytes; the limit is " + std::to_string(lim_.max_bytes));
        while (pos_ < b_.size()) {
            op_at_ = pos_;
            op_ = b_[pos_++];
            if (step()) return result_;
        }
        fail(what_ + ": pickle ends at offset " + std::to_string(b_.size()) + " without STOP");
    }

private:
    // Executes one opcode; true at STOP.
    bool step() {
        switch (op_) {
        case 0x80: {  // PROTO
            const uint8_t v = u8();
            if (v > 5) error("protocol " + std::to_string(v) + " is not supported (0..5)");
            return false;
        }
        case 0x95: {  // FRAME: a length hint only
            const uint64_t n = u64();
            if (n > left()) error("frame of " + std::to_string(n) + " bytes runs past the end (" + std::to_string(left()) + " left)");
            return false;
        }
        case 'c': {  // GLOBAL module\nname\n
            std::string module = line("module");
            std::string name = line("name");
            push_global(module, name);
            return false;
        }
        case 0x93: {  // STACK_GLOBAL
            ValuePtr name = pop(), module = pop();
            if (module->kind != Kind::Str || name->kind != Kind::Str)
                error("needs two strings, got " + describe(*module) + " and " + describe(*name));
            push_global(module->s, name->s);
            return false;
        }
        case 'q': memo_put(u8()); return false;      // BINPUT
        case 'r': memo_put(u32()); return false;     // LONG_BINPUT
        case 0x94: memo_put(memo_.size()); return false;  // MEMOIZE
        case 'h': memo_get(u8()); return false;      // BINGET
        case 'j': memo_get(u32()); return false;     // LONG_BINGET
        case '(':  // MARK
            if (marks_.size() >= lim_.max_marks) error("more than " + std::to_string(lim_.max_marks) + " open MARKs");
            marks_.push_back(stack_.size());
            return false;
        case 't': push(make_tuple(pop_mark())); return false;  // TUPLE
        case ')': push(make_tuple({})); return false;          // EMPTY_TUPLE
        case 0x85: case 0x86: case 0x87: {                       // TUPLE1/2/3
            const size_t n = size_t(op_ - 0x84);
            std::vector<ValuePtr> items(n);
            for (size_t k = n; k-- > 0;) items[k] = pop();
            push(make_tuple(std::move(items)));
            return false;
        }
        case 'Q': push(persistent_load(pop())); return false;  // BINPERSID
        case 'J': {                                              // BININT (signed 32-bit)
            const uint32_t u = u32();
            int32_t v;
            std::memcpy(&v, &u, 4);
            push(make_int(Kind::Int, v));
            return false;
        }
        case 'K': push(make_int(Kind::Int, u8())); return false;   // BININT1
        case 'M': push(make_int(Kind::Int, u16())); return false;  // BININT2
        case 0x8a: push(make_int(Kind::Int, long1())); return false;
        case 'X': push_string(u32()); return false;      // BINUNICODE
        case 0x8c: push_string(u8()); return false;      // SHORT_BINUNICODE
        case 0x8d: push_string(u64()); return false;     // BINUNICODE8
        case 0x88: push(make_int(Kind::Bool, 1)); return false;  // NEWTRUE
        case 0x89: push(make_int(Kind::Bool, 0)); return false;  // NEWFALSE
        case 'N': push(make(Kind::None)); return false;
        case 'G': need(8); pos_ += 8; push(make(Kind::Float)); return false;  // BINFLOAT (value unused)
        case '}': push(make(Kind::Dict)); return false;   // EMPTY_DICT
        case ']': push(make(Kind::List)); return false;   // EMPTY_LIST
        case 's':                                         // SETITEM
            pop();
            pop();
            expect_top(Kind::Dict);
            return false;
        case 'u':                                         // SETITEMS
            if (pop_mark().size() % 2 != 0) error("odd number of keys and values");
            expect_top(Kind::Dict);
            return false;
        case 'a': pop(); expect_top(Kind::List); return false;        // APPEND
        case 'e': pop_mark(); expect_top(Kind::List); return false;   // APPENDS
        case 'R': {                                                   // REDUCE
            ValuePtr args = pop(), callable = pop();
            push(reduce(*callable, *args));
            return false;
        }
        case 'b': pop(); top(); return false;  // BUILD: the state is ignored, the object stays
        case '.': {                            // STOP
            ValuePtr v = pop();
            if (!marks_.empty()) error(std::to_string(marks_.size()) + " MARK(s) still open");
            if (!stack_.empty()) error(std::to_string(stack_.size()) + " value(s) left on the stack under the result");
            if (v->kind != Kind::Tensor) error("the pickled object is a " + describe(*v) + ", not a tensor");
            result_ = v->rec;
            return true;
        }
        default:
            if (const char* name = opcode_name(op_))
                fail(what_ + ": unsupported pickle opcode " + hex8(op_) + " (" + name + ") at offset " + std::to_string(op_at_));
            fail(what_ + ": unknown pickle opcode " + hex8(op_) + " at offset " + std::to_string(op_at_));
        }
    }

    [[noreturn]] void error(const std::string& msg) const {
        const char* name = opcode_name(op_);
        fail(what_ + ": pickle opcode " + (name ? name : hex8(op_)) + " at offset " + std::to_string(op_at_) + ": " + msg);
    }

    // -- reading
    size_t left() const { return b_.size() - pos_; }
    void need(uint64_t n) const {
        if (n > left()) error("needs " + std::to_string(n) + " bytes, only " + std::to_string(left()) + " left");
    }
    uint64_t le(size_t n) {
        need(n);
        uint64_t v = 0;
        for (size_t k = 0; k < n; ++k) v |= uint64_t(b_[pos_ + k]) << (8 * k);
        pos_ += n;
        return v;
    }
    uint8_t u8() { return uint8_t(le(1)); }
    uint16_t u16() { return uint16_t(le(2)); }
    uint32_t u32() { return uint32_t(le(4)); }
    uint64_t u64() { return le(8); }

    int64_t long1() {
        const uint8_t n = u8();
        if (n > 8) error("integer of " + std::to_string(n) + " bytes does not fit 64 bits");
        if (n == 0) return 0;
        uint64_t v = le(n);
        if (n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t(0) << (8 * n);  // sign-extend
        int64_t s;
        std::memcpy(&s, &v, 8);
        return s;
    }

    // One newline-terminated printable ASCII line (GLOBAL's operands).
    std::string line(const char* what) {
        const size_t max = std::min(left(), lim_.max_string + 1);
        const uint8_t* start = b_.data() + pos_;
        const void* nl = std::memchr(start, '\n', max);
        if (!nl) error(std::string(what) + " is not newline-terminated within " + std::to_string(max) + " bytes");
        const size_t n = size_t(static_cast<const uint8_t*>(nl) - start);
        std::string s(reinterpret_cast<const char*>(start), n);
        for (char ch : s)
            if (ch < 0x20 || ch >= 0x7f) error(std::string(what) + " '" + printable(s) + "' has a non-printable byte");
        pos_ += n + 1;
        return s;
    }

    void push_string(uint64_t n) {
        if (n > lim_.max_string)
            error("string of " + std::to_string(n) + " bytes exceeds the limit of " + std::to_string(lim_.max_string));
        need(n);
        auto v = std::make_shared<Value>();
        v->kind = Kind::Str;
        v->s.assign(reinterpret_cast<const char*>(b_.data() + pos_), size_t(n));
        pos_ += size_t(n);
        push(std::move(v));
    }

    // -- stack, marks, memo
    size_t fence() const { return marks_.empty() ? 0 : marks_.back(); }
    void push(ValuePtr v) {
        if (stack_.size() >= lim_.max_stack) error("stack exceeds " + std::to_string(lim_.max_stack) + " values");
        stack_.push_back(std::move(v));
    }
    ValuePtr pop() {
        if (stack_.size() <= fence()) error(marks_.empty() ? "stack underflow" : "pops past a MARK");
        ValuePtr v = std::move(stack_.back());
        stack_.pop_back();
        return v;
    }
    const Value& top() const {
        if (stack_.size() <= fence()) error(marks_.empty() ? "stack underflow" : "reads past a MARK");
        return *stack_.back();
    }
    void expect_top(Kind kind) const {
        const Value& v = top();
        if (v.kind != kind) error("applies to a " + std::string(kind == Kind::Dict ? "dict" : "list") + ", not a " + describe(v));
    }
    std::vector<ValuePtr> pop_mark() {
        if (marks_.empty()) error("no MARK is open");
        const size_t k = marks_.back();
        marks_.pop_back();
        std::vector<ValuePtr> items(std::make_move_iterator(stack_.begin() + ptrdiff_t(k)), std::make_move_iterator(stack_.end()));
        stack_.resize(k);
        return items;
    }
    void memo_put(uint64_t key) {
        top();  // underflow check
        if (!memo_.contains(key) && memo_.size() >= lim_.max_memo)
            error("memo exceeds " + std::to_string(lim_.max_memo) + " entries");
        memo_[key] = stack_.back();
    }
    void memo_get(uint64_t key) {
        auto it = memo_.find(key);
        if (it == memo_.end()) error("memo key " + std::to_string(key) + " is not defined");
        push(it->second);
    }

    ValuePtr make_tuple(std::vector<ValuePtr> items) {
        auto v = std::make_shared<Value>();
        v->kind = Kind::Tuple;
        for (const ValuePtr& item : items) v->depth = std::max(v->depth, item->depth + 1);
        if (v->depth > lim_.max_depth) error("tuples nest deeper than " + std::to_string(lim_.max_depth));
        v->items = std::move(items);
        return v;
    }

    // -- the allow-list and what the allowed names mean
    void push_global(const std::string& module, const std::string& name) {
        const std::string full = module + "." + name;
        auto v = std::make_shared<Value>();
        v->kind = Kind::Global;
        v->s = full;
        if (full == "torch._utils._rebuild_tensor_v2") {
            v->callable = Callable::RebuildTensorV2;
        } else if (full == "collections.OrderedDict") {
            v->callable = Callable::OrderedDict;
        } else {
            bool found = false;
            for (StorageType t : kStorageTypes) {
                if (full == std::string("torch.") + storage_type_name(t)) {
                    v->callable = Callable::Storage;
                    v->rec.storage_type = t;
                    found = true;
                }
            }
            if (!found)
                error("global '" + printable(full) +
                      "' is not allowed (only torch._utils._rebuild_tensor_v2, torch.<Type>Storage and "
                      "collections.OrderedDict are)");
        }
        push(std::move(v));
    }

    // torch's persistent id: ('storage', torch.<Type>Storage, key, location, numel).
    ValuePtr persistent_load(const ValuePtr& pid) {
        const auto& it = pid->items;
        const bool ok = pid->kind == Kind::Tuple && it.size() == 5 && it[0]->kind == Kind::Str && it[0]->s == "storage" &&
                        it[1]->kind == Kind::Global && it[1]->callable == Callable::Storage && it[2]->kind == Kind::Str &&
                        it[3]->kind == Kind::Str && it[4]->kind == Kind::Int;
        if (!ok) {
            std::string got = describe(*pid);
            if (pid->kind == Kind::Tuple) {
                got += " (";
                for (size_t k = 0; k < it.size() && k < 6; ++k) got += (k ? ", " : "") + describe(*it[k]);
                got += ")";
            }
            error("persistent id must be ('storage', torch.<Type>Storage, key, location, numel), got " + got);
        }
        if (it[4]->i < 0) error("storage '" + printable(it[2]->s) + "' has negative size " + std::to_string(it[4]->i));
        auto v = std::make_shared<Value>();
        v->kind = Kind::Storage;
        v->rec.storage_type = it[1]->rec.storage_type;
        v->rec.storage_key = it[2]->s;
        v->rec.location = it[3]->s;
        v->rec.storage_numel = it[4]->i;
        return v;
    }

    std::vector<int64_t> int_tuple(const Value& v, const char* what) const {
        if (v.kind != Kind::Tuple) error(std::string("_rebuild_tensor_v2: ") + what + " must be a tuple, got " + describe(v));
        std::vector<int64_t> out;
        for (const ValuePtr& item : v.items) {
            if (item->kind != Kind::Int) error(std::string("_rebuild_tensor_v2: ") + what + " holds a " + describe(*item));
            if (item->i < 0) error(std::string("_rebuild_tensor_v2: ") + what + " holds negative value " + std::to_string(item->i));
            out.push_back(item->i);
        }
        return out;
    }

    ValuePtr reduce(const Value& callable, const Value& args) {
        if (callable.kind != Kind::Global) error("cannot call a " + describe(callable));
        if (args.kind != Kind::Tuple) error("arguments of '" + callable.s + "' must be a tuple, got " + describe(args));
        switch (callable.callable) {
        case Callable::OrderedDict: return make(Kind::Dict);  // backward hooks / metadata: contents unused
        case Callable::Storage: error("REDUCE may not call '" + callable.s + "'");
        case Callable::RebuildTensorV2: break;
        }
        // (storage, storage_offset, size, stride[, requires_grad, backward_hooks[, metadata]])
        const auto& a = args.items;
        if (a.size() < 4 || a.size() > 7) error("_rebuild_tensor_v2 takes 4 to 7 arguments, got " + std::to_string(a.size()));
        if (a[0]->kind != Kind::Storage) error("_rebuild_tensor_v2: storage argument is a " + describe(*a[0]));
        if (a[1]->kind != Kind::Int) error("_rebuild_tensor_v2: storage offset is a " + describe(*a[1]));
        if (a[1]->i < 0) error("_rebuild_tensor_v2: negative storage offset " + std::to_string(a[1]->i));
        auto v = std::make_shared<Value>();
        v->kind = Kind::Tensor;
        v->rec = a[0]->rec;
        v->rec.storage_offset = a[1]->i;
        v->rec.shape = int_tuple(*a[2], "shape");
        v->rec.stride = int_tuple(*a[3], "stride");
        if (v->rec.shape.size() != v->rec.stride.size())
            error("_rebuild_tensor_v2: shape has " + std::to_string(v->rec.shape.size()) + " dimensions, stride " +
                  std::to_string(v->rec.stride.size()));
        return v;
    }

    std::span<const uint8_t> b_;
    const std::string& what_;
    PickleLimits lim_;
    size_t pos_ = 0;
    size_t op_at_ = 0;
    uint8_t op_ = 0;
    std::vector<ValuePtr> stack_;
    std::vector<size_t> marks_;
    std::unordered_map<uint64_t, ValuePtr> memo_;
    TensorRecord result_;
};

}  // namespace

const char* storage_type_name(StorageType type) {
    switch (type) {
    case StorageType::Float: return "FloatStorage";
    case StorageType::Double: return "DoubleStorage";
    case StorageType::Half: return "HalfStorage";
    case StorageType::BFloat16: return "BFloat16Storage";
    case StorageType::Long: return "LongStorage";
    case StorageType::Int: return "IntStorage";
    case StorageType::Short: return "ShortStorage";
    case StorageType::Char: return "CharStorage";
    case StorageType::Byte: return "ByteStorage";
    case StorageType::Bool: return "BoolStorage";
    }
    return "?";
}

size_t storage_element_size(StorageType type) {
    switch (type) {
    case StorageType::Double:
    case StorageType::Long: return 8;
    case StorageType::Float:
    case StorageType::Int: return 4;
    case StorageType::Half:
    case StorageType::BFloat16:
    case StorageType::Short: return 2;
    case StorageType::Char:
    case StorageType::Byte:
    case StorageType::Bool: return 1;
    }
    return 1;
}

TensorRecord run_tensor_pickle(std::span<const uint8_t> pickle, const std::string& what, const PickleLimits& limits) {
    return Machine(pickle, what, limits).run();
}

}  // namespace ember::sparse
