#pragma once
// A well-formed GGUF of an architecture Ember does not run (gemma3n): one layer, one weight.
// Its header is all the Hub's fit badge reads.

#include <QByteArray>
#include <QFile>
#include <QTemporaryDir>

#include <string>
#include <vector>

#include "gguf/gguf_writer.h"

namespace gui_test {

inline QByteArray gemma3n_gguf() {
    using ember::gguf::Value;
    ember::gguf::Writer w;
    w.set("general.architecture", Value::string("gemma3n"));
    for (const char* key : {"block_count", "context_length", "embedding_length", "attention.head_count", "feed_forward_length"})
        w.set(std::string("gemma3n.") + key, Value::u32(key == std::string("block_count") ? 1 : 256));
    w.set("tokenizer.ggml.model", Value::string("llama"));
    w.add_tensor("blk.0.ffn_up.weight", {256, 2}, 0, std::vector<uint8_t>(2 * 256 * 4));
    QTemporaryDir dir;
    const std::string path = dir.path().toStdString() + "/gemma3n.gguf";
    w.write(path);
    QFile f(QString::fromStdString(path));
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace gui_test
