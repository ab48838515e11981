#!/usr/bin/env python3
"""synced_logdamage.py LOG HOW — damage a RocksDB write-ahead log in place.

The log format: 32 KiB blocks of records, each a 7-byte header (CRC32C,
2-byte little-endian length, type) and its payload (cmp_logfmt.h).
HOW:
  half        cut the file at half its size (mid-record, as a crash would not)
  boundary    cut it at the record boundary nearest its half (looks like a crash)
  zero-header zero the 7-byte header of a record in the middle of the last block
  length      make the length field of the second-to-last record larger
Prints the number of records the file held and the offset changed.
"""
import sys

BLOCK, HDR = 32768, 7


def records(data):
    """(offset, length) of each physical record, in order."""
    out, pos = [], 0
    while pos + HDR <= len(data):
        left = BLOCK - pos % BLOCK
        if left < HDR:
            pos += left
            continue
        n = data[pos + 4] | data[pos + 5] << 8
        if data[pos + 6] == 0 and n == 0:
            pos += left
            continue
        if pos + HDR + n > len(data):
            break
        out.append((pos, n))
        pos += HDR + n
    return out


def main():
    path, how = sys.argv[1], sys.argv[2]
    data = bytearray(open(path, "rb").read())
    recs = records(data)
    if len(recs) < 4:
        sys.exit("%s: only %d records" % (path, len(recs)))
    if how == "half":
        at = len(data) // 2
        del data[at:]
    elif how == "boundary":
        at = min((r[0] for r in recs), key=lambda o: abs(o - len(data) // 2))
        del data[at:]
    elif how == "zero-header":
        last = (len(data) - 1) // BLOCK * BLOCK
        inblock = [r for r in recs if r[0] >= last]
        if len(inblock) < 3:  # the last block is nearly empty: the one before
            last -= BLOCK
            inblock = [r for r in recs if last <= r[0] < last + BLOCK]
        at = inblock[len(inblock) // 2][0]
        data[at:at + HDR] = bytes(HDR)
    elif how == "length":
        at, n = recs[-2]
        n = min(n + 4096, 0xFFFF)
        data[at + 4], data[at + 5] = n & 0xFF, n >> 8
    else:
        sys.exit("unknown damage " + how)
    open(path, "wb").write(data)
    print(len(recs), at)


main()
