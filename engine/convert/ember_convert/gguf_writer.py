"""Writes GGUF v3 files (docs/FORMATS.md §1): the header, then 32-byte aligned blobs.

A PowerInfer sparse file is the same container with "PWRI" as its first four bytes
(section 2.1), which is what `magic` is for.
"""

import struct

import numpy as np

T_UINT32, T_INT32, T_FLOAT32, T_BOOL, T_STRING, T_ARRAY = 4, 5, 6, 7, 8, 9
GGML_F32, GGML_F16 = 0, 1
ALIGNMENT = 32  # GGUF's default; PowerInfer's converter does not write general.alignment

_SCALAR = {T_UINT32: "<I", T_INT32: "<i", T_FLOAT32: "<f", T_BOOL: "<?"}
_ARRAY = {T_UINT32: "<u4", T_INT32: "<i4", T_FLOAT32: "<f4"}


def _pad(n):
    return (n + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


def _string(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def _value(vtype, value, sub):
    if vtype == T_STRING:
        return _string(value)
    if vtype == T_ARRAY:
        head = struct.pack("<IQ", sub, len(value))
        if sub == T_STRING:
            return head + b"".join(_string(s) for s in value)
        return head + np.asarray(value, dtype=_ARRAY[sub]).tobytes()
    return struct.pack(_SCALAR[vtype], value)


class GgufWriter:
    def __init__(self):
        self.kvs = []      # (key, type, value, array element type)
        self.tensors = []  # (name, ne, ggml type, bytes)

    def add(self, key, vtype, value, sub=None):
        self.kvs.append((key, vtype, value, sub))

    def add_tensor(self, name, array):
        """array: numpy float32 or float16, row-major; GGUF's ne is its shape reversed."""
        gtype = {np.dtype(np.float32): GGML_F32, np.dtype(np.float16): GGML_F16}[array.dtype]
        self.tensors.append((name, list(reversed(array.shape)), gtype,
                             np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()))

    def write(self, path, magic=b"GGUF"):
        head = [magic, struct.pack("<IQQ", 3, len(self.tensors), len(self.kvs))]
        for key, vtype, value, sub in self.kvs:
            head += [_string(key), struct.pack("<I", vtype), _value(vtype, value, sub)]
        offset = 0
        for name, ne, gtype, raw in self.tensors:
            head += [_string(name), struct.pack("<I", len(ne)), struct.pack("<%dQ" % len(ne), *ne),
                     struct.pack("<IQ", gtype, offset)]
            offset = _pad(offset + len(raw))
        header = b"".join(head)
        with open(path, "wb") as fp:
            fp.write(header + b"\0" * (_pad(len(header)) - len(header)))
            for _, _, _, raw in self.tensors:
                fp.write(raw + b"\0" * (_pad(len(raw)) - len(raw)))
