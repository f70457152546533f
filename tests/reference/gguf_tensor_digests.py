#!/usr/bin/env python3
"""Prints a GGUF file's tensors as JSON: {name: [type name, sha256 of its data]}, in file order.

A reader of its own (not Ember's), so the digests of upstream's files do not depend on the code
under test. Knows the types upstream's llama-quantize writes for the recipes tst_quantize checks.
"""
import hashlib
import json
import struct
import sys

# ggml type id: (name, block size, bytes per block)
TYPES = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20), 6: ("Q5_0", 32, 22),
         7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 12: ("Q4_K", 256, 144), 13: ("Q5_K", 256, 176),
         14: ("Q6_K", 256, 210), 30: ("BF16", 1, 2)}
SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


def digests(path):
    data = open(path, "rb").read()
    pos = 0

    def take(fmt):
        nonlocal pos
        value = struct.unpack_from("<" + fmt, data, pos)[0]
        pos += struct.calcsize("<" + fmt)
        return value

    def string():
        nonlocal pos
        n = take("Q")
        pos += n
        return data[pos - n:pos].decode("utf-8")

    def value(kind):
        if kind == 8:
            return string()
        if kind == 9:
            inner, n = take("I"), take("Q")
            return [value(inner) for _ in range(n)]
        return take(SCALARS[kind])

    if data[:4] not in (b"GGUF", b"PWRI"):
        sys.exit(f"{path}: not a GGUF file")
    pos = 4
    take("I")
    n_tensors, n_kv = take("Q"), take("Q")
    alignment = 32
    for _ in range(n_kv):
        key, kind = string(), take("I")
        v = value(kind)
        if key == "general.alignment":
            alignment = v
    tensors = []
    for _ in range(n_tensors):
        name = string()
        ne = [take("Q") for _ in range(take("I"))]
        kind, offset = take("I"), take("Q")
        tensors.append((name, ne, kind, offset))
    base = (pos + alignment - 1) // alignment * alignment
    out = {}
    for name, ne, kind, offset in tensors:
        type_name, block, block_bytes = TYPES[kind]
        count = 1
        for n in ne:
            count *= n
        size = count // block * block_bytes
        out[name] = [type_name, hashlib.sha256(data[base + offset:base + offset + size]).hexdigest()]
    return out


if __name__ == "__main__":
    lines = [f" {json.dumps(name)}: {json.dumps(value)}" for name, value in digests(sys.argv[1]).items()]
    print("{\n" + ",\n".join(lines) + "}")
