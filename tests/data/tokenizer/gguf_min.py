"""Just enough GGUF v3 (metadata only, no tensors) for the tokenizer fixture scripts."""
import struct

U32, I32, F32, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9
_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def _read_str(f):
    (n,) = struct.unpack("<Q", f.read(8))
    return f.read(n).decode("utf-8")


def _read_value(f, vtype):
    if vtype == STRING:
        return _read_str(f)
    if vtype == ARRAY:
        etype, n = struct.unpack("<IQ", f.read(12))
        return (etype, [_read_value(f, etype) for _ in range(n)])
    fmt = _SCALAR[vtype]
    return struct.unpack(fmt, f.read(struct.calcsize(fmt)))[0]


def read_metadata(path):
    """Returns [(key, type, value)] in file order; arrays are (element type, [values])."""
    with open(path, "rb") as f:
        magic = f.read(4)
        if magic not in (b"GGUF", b"PWRI"):
            raise ValueError("%s: not a GGUF file" % path)
        version, _n_tensors, n_kv = struct.unpack("<IQQ", f.read(20))
        if version not in (2, 3):
            raise ValueError("%s: GGUF version %d" % (path, version))
        out = []
        for _ in range(n_kv):
            key = _read_str(f)
            (vtype,) = struct.unpack("<I", f.read(4))
            out.append((key, vtype, _read_value(f, vtype)))
        return out


def _write_str(out, s):
    b = s.encode("utf-8")
    out += struct.pack("<Q", len(b)) + b


def _write_value(out, vtype, value):
    if vtype == STRING:
        _write_str(out, value)
    elif vtype == ARRAY:
        etype, items = value
        out += struct.pack("<IQ", etype, len(items))
        for item in items:
            _write_value(out, etype, item)
    else:
        out += struct.pack(_SCALAR[vtype], value)


def write_metadata(path, kvs):
    """Writes a tensor-less GGUF v3 file from [(key, type, value)]."""
    out = bytearray(b"GGUF")
    out += struct.pack("<IQQ", 3, 0, len(kvs))
    for key, vtype, value in kvs:
        _write_str(out, key)
        out += struct.pack("<I", vtype)
        _write_value(out, vtype, value)
    # The data section starts at the next multiple of the alignment even with no tensors.
    out += b"\0" * (-len(out) % 32)
    with open(path, "wb") as f:
        f.write(out)
