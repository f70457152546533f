"""Minimal GGUF v3 reader/writer (standard library + numpy only).

Written for Ember's test fixtures from the container description in
docs/FORMATS.md §1.  Layout:

    magic "GGUF" | u32 version | u64 n_tensors | u64 n_kv | kv[n_kv] |
    tensor_info[n_tensors] | zero padding to `alignment` | data section

Each tensor blob starts at data_start + offset, offsets are multiples of the
alignment, and (as llama.cpp's Python writer does) every blob is zero-padded
to a multiple of the alignment, including the last one.
"""

import struct

import numpy as np

# GGUF metadata value types
T_UINT8, T_INT8, T_UINT16, T_INT16, T_UINT32, T_INT32, T_FLOAT32, T_BOOL, \
    T_STRING, T_ARRAY, T_UINT64, T_INT64, T_FLOAT64 = range(13)

_SCALAR_FMT = {
    T_UINT8: "<B", T_INT8: "<b", T_UINT16: "<H", T_INT16: "<h",
    T_UINT32: "<I", T_INT32: "<i", T_FLOAT32: "<f", T_BOOL: "<?",
    T_UINT64: "<Q", T_INT64: "<q", T_FLOAT64: "<d",
}
_ARRAY_DTYPE = {
    T_UINT8: "<u1", T_INT8: "<i1", T_UINT16: "<u2", T_INT16: "<i2",
    T_UINT32: "<u4", T_INT32: "<i4", T_FLOAT32: "<f4", T_BOOL: "<u1",
    T_UINT64: "<u8", T_INT64: "<i8", T_FLOAT64: "<f8",
}

# GGML tensor types used here: id -> (block size in elements, bytes per block)
GGML_F32, GGML_F16, GGML_Q4_0, GGML_Q8_0 = 0, 1, 2, 8
GGML_TYPE_SIZE = {GGML_F32: (1, 4), GGML_F16: (1, 2), GGML_Q4_0: (32, 18), GGML_Q8_0: (32, 34)}
GGML_TYPE_NAME = {GGML_F32: "F32", GGML_F16: "F16", GGML_Q4_0: "Q4_0", GGML_Q8_0: "Q8_0"}

DEFAULT_ALIGNMENT = 32


def tensor_nbytes(ne, ggml_type):
    blk, bpb = GGML_TYPE_SIZE[ggml_type]
    n = 1
    for d in ne:
        n *= int(d)
    if ne[0] % blk != 0:
        raise ValueError("ne[0]=%d not a multiple of block size %d" % (ne[0], blk))
    return n // blk * bpb


def _pad(n, align):
    return (n + align - 1) // align * align


# --------------------------------------------------------------------------- writer

class KV:
    """A typed metadata value. For arrays, `sub` is the element type."""

    def __init__(self, vtype, value, sub=None):
        self.vtype, self.value, self.sub = vtype, value, sub


def _enc_str(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def _enc_value(vtype, value, sub=None):
    if vtype == T_STRING:
        return _enc_str(value)
    if vtype == T_ARRAY:
        out = [struct.pack("<IQ", sub, len(value))]
        if sub == T_STRING:
            out.extend(_enc_str(s) for s in value)
        elif sub == T_ARRAY:
            raise ValueError("nested arrays are not allowed")
        else:
            out.append(np.asarray(value, dtype=_ARRAY_DTYPE[sub]).tobytes())
        return b"".join(out)
    return struct.pack(_SCALAR_FMT[vtype], value)


def write_gguf(path, kvs, tensors, alignment=DEFAULT_ALIGNMENT, magic=b"GGUF"):
    """kvs: list of (key, KV); tensors: list of (name, ne list, ggml_type, raw bytes).
    magic: b"GGUF" (dense) or b"PWRI" (PowerInfer sparse file: an ordinary GGUF v3 file
    whose first 4 bytes are "PWRI", docs/FORMATS.md §3.1).

    Returns (data_start, list of (name, offset)).
    """
    if magic not in (b"GGUF", b"PWRI"):
        raise ValueError("bad magic %r" % (magic,))
    head = [magic, struct.pack("<IQQ", 3, len(tensors), len(kvs))]
    for key, kv in kvs:
        head.append(_enc_str(key))
        head.append(struct.pack("<I", kv.vtype))
        head.append(_enc_value(kv.vtype, kv.value, kv.sub))
    offsets = []
    off = 0
    for name, ne, gtype, raw in tensors:
        if len(raw) != tensor_nbytes(ne, gtype):
            raise ValueError("%s: %d bytes, expected %d" % (name, len(raw), tensor_nbytes(ne, gtype)))
        head.append(_enc_str(name))
        head.append(struct.pack("<I", len(ne)))
        head.append(struct.pack("<%dQ" % len(ne), *[int(d) for d in ne]))
        head.append(struct.pack("<IQ", gtype, off))
        offsets.append((name, off))
        off = _pad(off + len(raw), alignment)
    header = b"".join(head)
    data_start = _pad(len(header), alignment)
    with open(path, "wb") as f:
        f.write(header)
        f.write(b"\0" * (data_start - len(header)))
        for name, ne, gtype, raw in tensors:
            f.write(raw)
            f.write(b"\0" * (_pad(len(raw), alignment) - len(raw)))
    return data_start, offsets


# --------------------------------------------------------------------------- reader

class GGUFFile:
    """Parsed GGUF file: .magic, .version, .kv (key -> (vtype, value, subtype)),
    .kv_order, .tensors (name -> dict(ne, type, offset)), .tensor_order,
    .data_start, .alignment, .file_size, .buf (bytes)."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.buf = f.read()
        self.file_size = len(self.buf)
        self._p = 0
        self.magic = self._take(4)
        if self.magic not in (b"GGUF", b"PWRI"):
            raise ValueError("bad magic %r" % self.magic)
        self.version, n_tensors, n_kv = struct.unpack("<IQQ", self._take(20))
        if self.version not in (2, 3):
            raise ValueError("unsupported version %d" % self.version)
        self.kv, self.kv_order = {}, []
        for _ in range(n_kv):
            key = self._str()
            (vtype,) = struct.unpack("<I", self._take(4))
            value, sub = self._value(vtype)
            self.kv[key] = (vtype, value, sub)
            self.kv_order.append(key)
        self.tensors, self.tensor_order = {}, []
        for _ in range(n_tensors):
            name = self._str()
            (nd,) = struct.unpack("<I", self._take(4))
            ne = list(struct.unpack("<%dQ" % nd, self._take(8 * nd)))
            gtype, off = struct.unpack("<IQ", self._take(12))
            self.tensors[name] = {"ne": ne, "type": gtype, "offset": off}
            self.tensor_order.append(name)
        al = self.kv.get("general.alignment")
        self.alignment = al[1] if al else DEFAULT_ALIGNMENT
        self.header_end = self._p
        self.data_start = _pad(self._p, self.alignment)

    def _take(self, n):
        b = self.buf[self._p:self._p + n]
        if len(b) != n:
            raise ValueError("truncated file")
        self._p += n
        return b

    def _str(self):
        (n,) = struct.unpack("<Q", self._take(8))
        return self._take(n).decode("utf-8")

    def _value(self, vtype):
        if vtype == T_STRING:
            return self._str(), None
        if vtype == T_ARRAY:
            sub, n = struct.unpack("<IQ", self._take(12))
            if sub == T_STRING:
                return [self._str() for _ in range(n)], sub
            if sub == T_ARRAY:
                raise ValueError("nested array")
            dt = np.dtype(_ARRAY_DTYPE[sub])
            arr = np.frombuffer(self._take(n * dt.itemsize), dtype=dt).copy()
            return arr, sub
        fmt = _SCALAR_FMT[vtype]
        (v,) = struct.unpack(fmt, self._take(struct.calcsize(fmt)))
        return v, None

    def value(self, key):
        return self.kv[key][1]

    def raw(self, name):
        t = self.tensors[name]
        start = self.data_start + t["offset"]
        return self.buf[start:start + tensor_nbytes(t["ne"], t["type"])]

    def array(self, name):
        """Dequantized float32 numpy array, shape reversed(ne) (row-major)."""
        t = self.tensors[name]
        shape = tuple(reversed(t["ne"]))
        return dequantize(self.raw(name), t["type"]).reshape(shape)


# --------------------------------------------------------------------------- dequantization

def dequantize(raw, gtype):
    if gtype == GGML_F32:
        return np.frombuffer(raw, dtype="<f4").astype(np.float32)
    if gtype == GGML_F16:
        return np.frombuffer(raw, dtype="<f2").astype(np.float32)
    if gtype == GGML_Q4_0:
        b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 18)
        d = b[:, :2].copy().view("<f2").astype(np.float32)  # (nb, 1)
        qs = b[:, 2:]
        lo = (qs & 0x0F).astype(np.int32) - 8
        hi = (qs >> 4).astype(np.int32) - 8
        q = np.concatenate([lo, hi], axis=1).astype(np.float32)  # elements 0..15, 16..31
        return (q * d).reshape(-1)
    if gtype == GGML_Q8_0:
        b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 34)
        d = b[:, :2].copy().view("<f2").astype(np.float32)
        q = b[:, 2:].copy().view(np.int8).astype(np.float32)
        return (q * d).reshape(-1)
    raise ValueError("unsupported ggml type %d" % gtype)
