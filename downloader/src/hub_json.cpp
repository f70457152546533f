#include "hub_json.h"

#include <nlohmann/json.hpp>

namespace ember::hub::json {
namespace {

using nlohmann::json;

// Thrown only inside this file; every entry point turns it into an Error.
struct BadField {
    std::string what;
};

const json& field(const json& object, const char* name, const std::string& where) {
    auto it = object.find(name);
    if (it == object.end()) throw BadField{"field '" + where + name + "' is missing"};
    return *it;
}

std::string string_field(const json& object, const char* name, const std::string& where) {
    const json& v = field(object, name, where);
    if (!v.is_string()) throw BadField{"field '" + where + name + "' is " + v.type_name() + ", not a string"};
    return v.get<std::string>();
}

std::string optional_string(const json& object, const char* name, const std::string& where) {
    auto it = object.find(name);
    if (it == object.end() || it->is_null()) return {};
    return string_field(object, name, where);
}

int64_t optional_count(const json& object, const char* name, const std::string& where) {
    auto it = object.find(name);
    if (it == object.end() || it->is_null()) return 0;
    if (!it->is_number_integer()) throw BadField{"field '" + where + name + "' is " + it->type_name() + ", not an integer"};
    return it->get<int64_t>();
}

uint64_t size_field(const json& object, const char* name, const std::string& where) {
    const json& v = field(object, name, where);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0)) {
        throw BadField{"field '" + where + name + "' is " + v.dump() + ", not a size"};
    }
    return v.get<uint64_t>();
}

std::string hex_field(const json& object, const char* name, const std::string& where, size_t n_hex) {
    std::string s = string_field(object, name, where);
    bool hex = s.size() == n_hex && s.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (!hex) throw BadField{"field '" + where + name + "' is '" + s + "', not " + std::to_string(n_hex) + " lower-case hex digits"};
    return s;
}

Gated gated_field(const json& object, const std::string& where) {
    auto it = object.find("gated");
    if (it == object.end() || it->is_null() || (it->is_boolean() && !it->get<bool>())) return Gated::No;
    if (it->is_string() && it->get<std::string>() == "auto") return Gated::Auto;
    if (it->is_string() && it->get<std::string>() == "manual") return Gated::Manual;
    if (it->is_boolean()) return Gated::Manual;
    throw BadField{"field '" + where + "gated' is " + it->dump() + ", not false, \"auto\" or \"manual\""};
}

json parse_json(const std::string& body, bool want_array) {
    json doc = json::parse(body, nullptr, false);
    if (doc.is_discarded()) throw BadField{"answer is not valid JSON"};
    if (want_array && !doc.is_array()) throw BadField{std::string("answer is ") + doc.type_name() + ", not an array"};
    if (!want_array && !doc.is_object()) throw BadField{std::string("answer is ") + doc.type_name() + ", not an object"};
    return doc;
}

// "[3]." — built by appending: GCC 12 warns falsely (-Wrestrict) on "[" + std::to_string(i).
std::string at_index(size_t i) {
    std::string out = "[";
    out += std::to_string(i);
    out += "].";
    return out;
}

template <class F>
auto guarded(const std::string& url, F&& parse) -> Result<decltype(parse())> {
    try {
        return parse();
    } catch (const BadField& e) {
        return Error{url + ": " + e.what};
    }
}

}  // namespace

Result<std::vector<ModelSummary>> parse_search(const std::string& body, const std::string& url) {
    return guarded(url, [&] {
        std::vector<ModelSummary> out;
        json doc = parse_json(body, true);
        for (size_t i = 0; i < doc.size(); ++i) {
            const json& m = doc[i];
            std::string where = at_index(i);
            if (!m.is_object()) throw BadField{"entry " + where.substr(0, where.size() - 1) + " is not an object"};
            ModelSummary s;
            s.id = string_field(m, "id", where);
            s.downloads = optional_count(m, "downloads", where);
            s.likes = optional_count(m, "likes", where);
            s.last_modified = optional_string(m, "lastModified", where);
            s.gated = gated_field(m, where);
            if (auto tags = m.find("tags"); tags != m.end() && tags->is_array()) {
                for (const json& t : *tags) {
                    if (t.is_string()) s.tags.push_back(t.get<std::string>());
                }
            }
            out.push_back(std::move(s));
        }
        return out;
    });
}

Result<RepoInfo> parse_info(const std::string& body, const std::string& url) {
    return guarded(url, [&] {
        json doc = parse_json(body, false);
        RepoInfo info;
        info.id = string_field(doc, "id", "");
        info.sha = hex_field(doc, "sha", "", 40);
        info.gated = gated_field(doc, "");
        if (auto p = doc.find("private"); p != doc.end() && p->is_boolean()) info.is_private = p->get<bool>();
        info.last_modified = optional_string(doc, "lastModified", "");
        if (auto sib = doc.find("siblings"); sib != doc.end()) {
            if (!sib->is_array()) throw BadField{"field 'siblings' is not an array"};
            for (size_t i = 0; i < sib->size(); ++i) {
                const json& s = (*sib)[i];
                std::string where = "siblings" + at_index(i);
                if (!s.is_object()) throw BadField{"field '" + where + "' is not an object"};
                info.siblings.push_back(string_field(s, "rfilename", where));
            }
        }
        return info;
    });
}

Result<std::vector<FileEntry>> parse_tree_page(const std::string& body, const std::string& url) {
    return guarded(url, [&] {
        std::vector<FileEntry> out;
        json doc = parse_json(body, true);
        for (size_t i = 0; i < doc.size(); ++i) {
            const json& e = doc[i];
            std::string where = at_index(i);
            if (!e.is_object()) throw BadField{"entry " + where.substr(0, where.size() - 1) + " is not an object"};
            std::string type = string_field(e, "type", where);
            if (type == "directory") continue;
            if (type != "file") throw BadField{"field '" + where + "type' is '" + type + "', not file or directory"};
            FileEntry f;
            f.path = string_field(e, "path", where);
            f.size = size_field(e, "size", where);
            f.oid = hex_field(e, "oid", where, 40);
            if (auto lfs = e.find("lfs"); lfs != e.end() && !lfs->is_null()) {
                if (!lfs->is_object()) throw BadField{"field '" + where + "lfs' is not an object"};
                f.lfs_sha256 = hex_field(*lfs, "oid", where + "lfs.", 64);
                uint64_t lfs_size = size_field(*lfs, "size", where + "lfs.");
                if (lfs_size != f.size) {
                    throw BadField{"entry '" + f.path + "' has size " + std::to_string(f.size) + " but lfs.size " +
                                   std::to_string(lfs_size)};
                }
            }
            out.push_back(std::move(f));
        }
        return out;
    });
}

}  // namespace ember::hub::json
