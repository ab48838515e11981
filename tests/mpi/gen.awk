# gen.awk — test data for the MPI tests: fingerprints with planted
# neighbours and ties. usage: awk -v seed=S -v n=N -v q=Q -v out=stored|batch -f gen.awk
# stored: N lines "HEX<TAB>d<i>" (some copies of one fingerprint under
#         several keys, some pairs at equal distance from a later query);
# batch:  Q lines "HEX<TAB>q<i>" (exact and near copies of stored
#         documents at distances 0..5, copies of earlier batch documents,
#         stored keys reused, fresh random ones).
function hex1(v) { return substr("0123456789abcdef", v + 1, 1) }
function val1(c) { return index("0123456789abcdef", c) - 1 }
function xor4(a, b,   r, bit) {
    r = 0
    for (bit = 1; bit < 16; bit *= 2)
        if ((int(a / bit) % 2) != (int(b / bit) % 2)) r += bit
    return r
}
function rnd_fp(   s, i) { s = ""; for (i = 0; i < 16; i++) s = s hex1(int(rand() * 16)); return s }
# flip d distinct bits of fp
function flip(fp, d,   used, i, p, b, key, c) {
    split("", used)
    for (i = 0; i < d; ) {
        p = int(rand() * 16) + 1; b = 2 ^ int(rand() * 4); key = p ":" b
        if (key in used) continue
        used[key] = 1; i++
        c = val1(substr(fp, p, 1))
        fp = substr(fp, 1, p - 1) hex1(xor4(c, b)) substr(fp, p + 1)
    }
    return fp
}
BEGIN {
    srand(seed)
    # the stored set, deterministic for the seed
    for (i = 0; i < n; i++) {
        r = rand()
        if (i > 10 && r < 0.05) st[i] = st[int(rand() * i)]          # same fp, other key
        else if (i > 10 && r < 0.15) st[i] = flip(st[int(rand() * i)], 1 + int(rand() * 3))
        else st[i] = rnd_fp()
    }
    if (out == "stored") { for (i = 0; i < n; i++) printf "%s\td%d\n", st[i], i; exit }
    for (j = 0; j < q; j++) {
        r = rand()
        if (r < 0.35) f = flip(st[int(rand() * n)], int(rand() * 6))
        else if (r < 0.5 && j > 0) f = flip(bt[int(rand() * j)], int(rand() * 5))
        else f = rnd_fp()
        bt[j] = f
        if (rand() < 0.05) printf "%s\td%d\n", f, int(rand() * n)   # a stored key again
        else printf "%s\tq%d\n", f, j
    }
}
