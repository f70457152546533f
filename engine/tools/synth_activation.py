#!/usr/bin/env python3
"""Writes activation/activation_N.pt statistics for a synthetic model (ember-synth-model), so a
GPU benchmark has hot neurons to place: per layer, counts that fall off as a power of a random
rank, in the torch.save layout PowerInfer's profiler writes (a stored zip around a protocol-2
pickle of one float tensor). Standard library only: GPU machines need not have torch.

usage: synth_activation.py OUT_DIR N_LAYER N_FF [SEED]
"""
import os
import random
import struct
import sys
import zipfile


def op_int(n):
    if 0 <= n < 256:
        return b'K' + bytes([n])
    if 0 <= n < 65536:
        return b'M' + struct.pack('<H', n)
    return b'J' + struct.pack('<i', n)


def op_str(s):
    b = s.encode()
    return b'X' + struct.pack('<I', len(b)) + b


def tensor_pickle(numel):
    return (b'\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((' + op_str('storage') + b'ctorch\nFloatStorage\n' +
            op_str('0') + op_str('cpu') + op_int(numel) + b'tQ' + op_int(0) + op_int(numel) + b'\x85' +
            op_int(1) + b'\x85\x89ccollections\nOrderedDict\n)RtR.')


def write(path, counts):
    prefix = os.path.splitext(os.path.basename(path))[0] + '/'
    with zipfile.ZipFile(path, 'w') as z:
        for name, data in ((prefix + 'data.pkl', tensor_pickle(len(counts))),
                           (prefix + 'data/0', struct.pack('<%df' % len(counts), *counts)),
                           (prefix + 'version', b'3\n')):
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    out, n_layer, n_ff = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) == 5 else 1)
    os.makedirs(out, exist_ok=True)
    for il in range(n_layer):
        ranks = list(range(n_ff))
        rng.shuffle(ranks)
        write(os.path.join(out, 'activation_%d.pt' % il), [float(int(1e6 / (r + 1) ** 0.8)) for r in ranks])


if __name__ == '__main__':
    main()
