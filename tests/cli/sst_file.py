"""sst_file.py — read or damage a RocksDB table file (block-based format),
for the damage tests (damage_lib.sh).

usage: sst_file.py flip FILE WHERE   flip a byte at fraction WHERE of the
                                     data blocks, in the middle of the
                                     filter block or in the index; exit 3,
                                     nothing flipped, when FILE has no filter
       sst_file.py family FILE...    print each file's column family name
                                     (an empty line for a file written
                                     apart and ingested, which has none)
"""
import sys


def varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return r, i


def block_entries(blk):
    """(key, value) of each entry of an uncompressed block: shared,
    non-shared and value lengths, key delta, value; then the restart
    offsets and their count."""
    nrestarts = int.from_bytes(blk[-4:], 'little')
    end, j, key = len(blk) - 4 - 4 * nrestarts, 0, b''
    while j < end:
        shared, j = varint(blk, j)
        unshared, j = varint(blk, j)
        vlen, j = varint(blk, j)
        key = key[:shared] + blk[j:j + unshared]
        j += unshared
        yield key, blk[j:j + vlen]
        j += vlen


def handle(v):
    off, k = varint(v, 0)
    size, _ = varint(v, k)
    return off, size


def read(path):
    """The file's bytes, its metaindex entries and its index offset."""
    d = open(path, 'rb').read()
    footer = d[-53:]  # format 2+: checksum type, metaindex and index handles
    mo, i = varint(footer, 1)
    ms, i = varint(footer, i)
    io, _ = varint(footer, i)
    return d, dict(block_entries(d[mo:mo + ms])), io


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == 'family':
        for p in sys.argv[2:]:
            d, meta, _ = read(p)
            off, size = handle(meta[b'rocksdb.properties'])
            props = dict(block_entries(d[off:off + size]))
            print(props.get(b'rocksdb.column.family.name', b'').decode())
        return 0
    d, meta, io = read(path)
    where = sys.argv[3]
    if where == 'filter':
        fh = [v for k, v in meta.items() if b'filter.' in k]
        if not fh:
            return 3
        off, size = handle(fh[0])
        off += size // 2
    else:
        off = io + 3 if where == 'index' else int(io * float(where))
    with open(path, 'r+b') as f:
        f.seek(off)
        b = f.read(1)
        f.seek(off)
        f.write(bytes([b[0] ^ 0x5a]))
    return 0


if __name__ == '__main__':
    sys.exit(main())
