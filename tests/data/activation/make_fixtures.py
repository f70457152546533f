#!/usr/bin/python3
"""Regenerates the torch.save fixtures in this folder and expected.json.

Run once with Debian's python3-torch (torch 1.13):  /usr/bin/python3 tests/data/activation/make_fixtures.py
Outputs are committed; the C++ test (tests/engine/tst_activation_file.cpp) never runs Python.

* expected.json "real":    facts about tests/data/tiny-relu-llama/activation/activation_N.pt as
                           torch.load(weights_only=True) sees them (PowerInfer's profiler made those files).
* expected.json "vectors": every valid fixture here -> its values as torch converts them to float64
                           (non-finite values as the strings "inf", "-inf", "nan").
* hostile/:                files the reader must reject; the C++ test holds the expected messages.
* dirs/:                   activation folders for read_activation_dir.
"""
import json
import math
import os
import shutil
import struct
import zipfile
import zlib

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.path.normpath(os.path.join(HERE, '..', 'tiny-relu-llama', 'activation'))
STAMP = (1980, 1, 1, 0, 0, 0)  # fixed member times: the outputs are byte-for-byte reproducible


def out(rel):
    path = os.path.join(HERE, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return path


def save(t, rel, **kw):
    path = out(rel)
    torch.save(t, path, **kw)
    return path


def members_of(path):
    with zipfile.ZipFile(path) as z:
        return [(i.filename, z.read(i.filename)) for i in z.infolist()]


def prefix_of(members):
    (name,) = [n for n, _ in members if n.endswith('data.pkl')]
    return name[:-len('data.pkl')]


def write_zip(path, members, deflate=()):
    """A zip written by Python's zipfile: sizes in the local headers, no alignment padding."""
    with zipfile.ZipFile(path, 'w') as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=STAMP)
            info.compress_type = zipfile.ZIP_DEFLATED if name in deflate else zipfile.ZIP_STORED
            z.writestr(info, data)


def write_zip64(path, members):
    """A stored zip whose central directory uses zip64 throughout (saturated fields + extra)."""
    body, central = bytearray(), bytearray()
    for name, data in members:
        nb, crc, off = name.encode(), zlib.crc32(data), len(body)
        body += struct.pack('<IHHHHHIIIHH', 0x04034b50, 45, 0, 0, 0, 0x21, crc, len(data), len(data), len(nb), 0)
        body += nb + data
        extra = struct.pack('<HHQQQ', 1, 24, len(data), len(data), off)
        central += struct.pack('<IHHHHHHIIIHHHHHII', 0x02014b50, 45, 45, 0, 0, 0, 0x21, crc, 0xFFFFFFFF,
                               0xFFFFFFFF, len(nb), len(extra), 0, 0, 0, 0, 0xFFFFFFFF) + nb + extra
    cd_off, n = len(body), len(members)
    body += central
    z64 = len(body)
    body += struct.pack('<IQHHIIQQQQ', 0x06064b50, 44, 45, 45, 0, 0, n, n, len(central), cd_off)
    body += struct.pack('<IIQI', 0x07064b50, 0, z64, 1)
    body += struct.pack('<IHHHHIIH', 0x06054b50, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    with open(path, 'wb') as f:
        f.write(body)


# ---- hand-written pickles (protocol 2, the sequence torch.save emits, without memo puts) ----

def op_int(n):
    if 0 <= n < 256:
        return b'K' + bytes([n])
    if 0 <= n < 65536:
        return b'M' + struct.pack('<H', n)
    if -2**31 <= n < 2**31:
        return b'J' + struct.pack('<i', n)
    raw = n.to_bytes((n.bit_length() + 8) // 8, 'little', signed=True)
    return b'\x8a' + bytes([len(raw)]) + raw


def op_str(s):
    b = s.encode()
    return b'X' + struct.pack('<I', len(b)) + b


def op_tuple(items):
    body = b''.join(op_int(i) for i in items)
    if len(items) == 0:
        return b')'
    if len(items) <= 3:
        return body + bytes([0x84 + len(items)])
    return b'(' + body + b't'


def tensor_pickle(storage='FloatStorage', key='0', numel=8, offset=0, shape=(8,), stride=(1,)):
    return (b'\x80\x02' + b'ctorch._utils\n_rebuild_tensor_v2\n' + b'((' + op_str('storage') +
            b'ctorch\n' + storage.encode() + b'\n' + op_str(key) + op_str('cpu') + op_int(numel) + b'tQ' +
            op_int(offset) + op_tuple(shape) + op_tuple(stride) + b'\x89' + b'ccollections\nOrderedDict\n)R' +
            b'tR.')


def write_torch_like(rel, pkl, storages, version=b'3\n', byteorder=None, deflate=()):
    """A torch.save-shaped archive around a hand-written pickle."""
    prefix = os.path.splitext(os.path.basename(rel))[0] + '/'
    members = [(prefix + 'data.pkl', pkl)]
    if byteorder is not None:
        members.append((prefix + 'byteorder', byteorder))
    members += [(prefix + 'data/' + k, v) for k, v in storages.items()]
    if version is not None:
        members.append((prefix + 'version', version))
    path = out(rel)
    write_zip(path, members, deflate={prefix + d for d in deflate})
    return path


def f32_bytes(values):
    return struct.pack('<%df' % len(values), *values)


# ---- expected values -----------------------------------------------------------------------

def as_json(values):
    res = []
    for v in values:
        if math.isnan(v):
            res.append('nan')
        elif math.isinf(v):
            res.append('inf' if v > 0 else '-inf')
        else:
            res.append(v)
    return res


def loaded(path, weights_only=True):
    # torch 1.13's weights_only unpickler knows no protocol-4 opcodes; those files are our own.
    t = torch.load(path, weights_only=weights_only)
    assert isinstance(t, torch.Tensor) and t.dim() == 1, path
    return [float(v) for v in t.double().tolist()]


def main():
    for sub in ('hostile', 'dirs'):
        shutil.rmtree(os.path.join(HERE, sub), ignore_errors=True)
    for name in os.listdir(HERE):
        if name.endswith('.pt'):
            os.remove(os.path.join(HERE, name))

    expected = {'real': {}, 'vectors': {}}

    # The profiler's files: summary facts, checked by the C++ reader to the last bit.
    for il in range(6):
        name = 'activation_%d.pt' % il
        v = loaded(os.path.join(REAL, name))
        nz = [k for k, x in enumerate(v) if x != 0]
        expected['real'][name] = {
            'count': len(v), 'sum': math.fsum(v), 'min': min(v), 'max': max(v),
            'first': v[0], 'last': v[-1], 'argmax': v.index(max(v)), 'nonzero': len(nz),
            'samples': {str(k): v[k] for k in (1, 100, 255, 256, 511, 777, 1000)},
        }

    # Every storage type, written by torch.save.
    inf, nan = float('inf'), float('nan')
    dtypes = {
        'float32': (torch.float32, [0.0, 1.5, -2.25, 3.0e-3, 1e30, -1e-40, inf, nan, 16777217.0]),
        'float64': (torch.float64, [0.0, 1.5, -2.25, 1e-300, 5e-324, 1.7976931348623157e308, -inf, nan, 0.1]),
        'float16': (torch.float16, [0.0, 1.5, -2.25, 65504.0, 2.0**-24, 6.1e-5, -inf, nan, 0.1]),
        'bfloat16': (torch.bfloat16, [0.0, 1.5, -2.25, 3e38, 1e-39, -inf, nan, 0.1]),
        'int64': (torch.int64, [0, 1, -1, 2**53, -2**62, 2**63 - 1, -2**63]),
        'int32': (torch.int32, [0, 1, -1, 2**31 - 1, -2**31, 123456]),
        'int16': (torch.int16, [0, 1, -1, 32767, -32768, 1234]),
        'int8': (torch.int8, [0, 1, -1, 127, -128, 42]),
        'uint8': (torch.uint8, [0, 1, 128, 255, 42]),
        'bool': (torch.bool, [True, False, True, True, False]),
    }
    for name, (dtype, values) in dtypes.items():
        rel = 'dtype_%s.pt' % name
        path = save(torch.tensor(values, dtype=dtype), rel)
        expected['vectors'][rel] = as_json(loaded(path))

        # The same values big-endian: a `byteorder` member saying "big" and every element swapped.
        size = torch.tensor([], dtype=dtype).element_size()
        if size > 1:
            members = members_of(path)
            prefix = prefix_of(members)
            swapped = []
            for n, data in members:
                if n.startswith(prefix + 'data/'):
                    data = b''.join(data[k:k + size][::-1] for k in range(0, len(data), size))
                swapped.append((n, data))
            swapped.insert(1, (prefix + 'byteorder', b'big'))
            big = 'big_%s.pt' % name
            write_zip(out(big), swapped)
            expected['vectors'][big] = expected['vectors'][rel]

    f32 = os.path.join(HERE, 'dtype_float32.pt')
    f32_members = members_of(f32)
    f32_prefix = prefix_of(f32_members)

    # An explicit "little" byteorder member; another prefix ("archive/", as newer torch writes).
    m = list(f32_members)
    m.insert(1, (f32_prefix + 'byteorder', b'little'))
    write_zip(out('little_explicit.pt'), m)
    expected['vectors']['little_explicit.pt'] = expected['vectors']['dtype_float32.pt']
    write_zip(out('archive_prefix.pt'), [('archive/' + n[len(f32_prefix):], d) for n, d in f32_members])
    assert loaded(out('archive_prefix.pt'))[:3] == [0.0, 1.5, -2.25]
    expected['vectors']['archive_prefix.pt'] = expected['vectors']['dtype_float32.pt']

    # Zip64 directory records.
    write_zip64(out('zip64.pt'), f32_members)
    with zipfile.ZipFile(out('zip64.pt')) as z:
        assert z.testzip() is None
    expected['vectors']['zip64.pt'] = as_json(loaded(out('zip64.pt')))

    # A view with a non-zero storage offset: torch keeps the whole 20-element storage.
    base = torch.arange(20, dtype=torch.float32)
    path = save(base[5:13], 'offset_view.pt')
    (data,) = [d for n, d in members_of(path) if '/data/' in n]
    assert len(data) == 20 * 4, 'torch did not keep the base storage'
    expected['vectors']['offset_view.pt'] = as_json(loaded(path))
    assert expected['vectors']['offset_view.pt'] == [float(k) for k in range(5, 13)]

    # Pickle protocol 4 (FRAME, SHORT_BINUNICODE, STACK_GLOBAL, MEMOIZE).
    path = save(torch.tensor([1.0, 2.0, 4.0, 8.0]), 'protocol4.pt', pickle_protocol=4)
    expected['vectors']['protocol4.pt'] = as_json(loaded(path, weights_only=False))

    # An empty vector; a hand-written pickle in a Python-written zip (no padding, no descriptors).
    path = save(torch.zeros(0), 'empty.pt')
    expected['vectors']['empty.pt'] = loaded(path)
    path = write_torch_like('handmade.pt', tensor_pickle(numel=4, shape=(4,)), {'0': f32_bytes([9, 8, 7, 6])})
    expected['vectors']['handmade.pt'] = as_json(loaded(path))
    assert expected['vectors']['handmade.pt'] == [9.0, 8.0, 7.0, 6.0]

    # ---- hostile files (never torch.load'ed) ----
    raw = open(f32, 'rb').read()
    open(out('hostile/truncated.pt'), 'wb').write(raw[:len(raw) // 2])
    eocd = raw.rfind(b'PK\x05\x06')
    patched = bytearray(raw)
    patched[eocd + 16:eocd + 20] = struct.pack('<I', len(raw) + 1000)
    open(out('hostile/bad_cd_offset.pt'), 'wb').write(bytes(patched))
    write_zip(out('hostile/deflate.pt'), f32_members, deflate={f32_prefix + 'data/0'})
    evil = b'\x80\x02cos\nsystem\n' + op_str('echo pwned') + b'\x85R.'
    write_torch_like('hostile/global_os_system.pt', evil, {'0': f32_bytes([1, 2])})
    write_torch_like('hostile/unknown_opcode.pt', b'\x80\x02\xff' + tensor_pickle()[2:], {'0': f32_bytes([0] * 8)})
    save(torch.zeros(2, 3), 'hostile/tensor_2d.pt')
    save(torch.tensor(3.0), 'hostile/scalar.pt')
    save(torch.arange(10, dtype=torch.float32)[::2], 'hostile/strided.pt')
    save({'w': torch.zeros(4)}, 'hostile/dict.pt')
    write_torch_like('hostile/shape_past_storage.pt', tensor_pickle(numel=8, shape=(16,)), {'0': f32_bytes([1] * 8)})
    write_torch_like('hostile/storage_short.pt', tensor_pickle(numel=16, shape=(16,)), {'0': f32_bytes([1] * 8)})
    write_torch_like('hostile/huge_count.pt', tensor_pickle(numel=2**40, shape=(2**40,)), {'0': f32_bytes([1] * 8)})
    write_torch_like('hostile/missing_storage.pt', tensor_pickle(key='1'), {'0': f32_bytes([1] * 8)})
    write_torch_like('hostile/bad_key.pt', tensor_pickle(key='../x'), {'0': f32_bytes([1] * 8)})
    write_zip(out('hostile/no_pickle.pt'), [(n, d) for n, d in f32_members if not n.endswith('data.pkl')])
    write_torch_like('hostile/bad_byteorder.pt', tensor_pickle(), {'0': f32_bytes([1] * 8)}, byteorder=b'middle')
    write_torch_like('hostile/bad_version.pt', tensor_pickle(), {'0': f32_bytes([1] * 8)}, version=b'99\n')
    write_torch_like('hostile/bool_byte.pt', tensor_pickle(storage='BoolStorage', numel=4, shape=(4,)),
                     {'0': b'\x00\x01\x07\x00'})

    # ---- activation folders ----
    for il in range(12):  # layer il holds il*100 + j: activation_10.pt must land on layer 10, not 2
        save(torch.arange(16, dtype=torch.float32) + 100 * il, 'dirs/twelve/activation_%d.pt' % il)
    save(torch.ones(16), 'dirs/wrong_length/activation_0.pt')
    save(torch.ones(15), 'dirs/wrong_length/activation_1.pt')
    save(torch.ones(16), 'dirs/missing_layer/activation_0.pt')
    save(torch.ones(16), 'dirs/missing_layer/activation_2.pt')
    save(torch.ones(16), 'dirs/negative/activation_0.pt')
    neg = torch.ones(16)
    neg[5] = -1
    save(neg, 'dirs/negative/activation_1.pt')
    bad = torch.ones(16)
    bad[3] = float('inf')
    save(bad, 'dirs/not_finite/activation_0.pt')
    save(torch.arange(16, dtype=torch.int64) * 3, 'dirs/int64/activation_0.pt')  # LongStorage counts

    with open(out('expected.json'), 'w') as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write('\n')


if __name__ == '__main__':
    main()
