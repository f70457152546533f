"""Reads .safetensors files: u64 header length, a JSON header, then raw little-endian data.

Every entry is checked against the file size before its bytes are used.
"""

import json
import os
import struct

import numpy as np
import torch

from .errors import ConvertError

_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I32": np.int32,
           "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_}


def _bf16_to_f32(raw, shape):
    bits = raw.view("<u2").astype(np.uint32) << 16
    return torch.from_numpy(bits.view(np.float32).reshape(shape))


def read_safetensors(path):
    """name -> torch tensor, in the order of the header."""
    size = os.path.getsize(path)
    with open(path, "rb") as fp:
        raw_len = fp.read(8)
        if len(raw_len) != 8:
            raise ConvertError("%s: truncated safetensors header" % path)
        (n,) = struct.unpack("<Q", raw_len)
        if n > size - 8:
            raise ConvertError("%s: header length %d exceeds the file size %d" % (path, n, size))
        try:
            header = json.loads(fp.read(n).decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise ConvertError("%s: header is not JSON: %s" % (path, e)) from e
    # mapped, so that a large shard is not held twice while its tensors are copied out
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n) if size > 8 + n else np.zeros(0, np.uint8)
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype, shape, (begin, end) = info["dtype"], [int(d) for d in info["shape"]], info["data_offsets"]
        except (KeyError, TypeError, ValueError) as e:
            raise ConvertError("%s: tensor %s: malformed header entry %r" % (path, name, info)) from e
        if not 0 <= begin <= end <= len(data):
            raise ConvertError("%s: tensor %s: data_offsets [%d, %d] outside the data (%d bytes)"
                               % (path, name, begin, end, len(data)))
        np_type = np.dtype("<u2") if dtype == "BF16" else np.dtype(_DTYPES.get(dtype, np.void)).newbyteorder("<")
        if np_type == np.void:
            raise ConvertError("%s: tensor %s: dtype %s is not supported" % (path, name, dtype))
        if end - begin != np_type.itemsize * int(np.prod(shape, dtype=np.int64)):
            raise ConvertError("%s: tensor %s: %d bytes for shape %s %s" % (path, name, end - begin, shape, dtype))
        raw = data[begin:end]
        out[name] = (_bf16_to_f32(raw, shape) if dtype == "BF16"
                     else torch.from_numpy(raw.view(np_type).reshape(shape).copy()))
    return out
