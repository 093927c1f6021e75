"""Attribute perf samples to the Go guest's functions (see guestprof.sh).

wazero compiles a module into one executable mapping; its compilation
cache file (wazero 1.12's wazevo format: "WAZEVO", a length-prefixed
version, a u32 function count, a u64 offset per local function, a u64
code length, the code) gives where each local function starts. The names
come from the name section of the module wazero compiled (sandbox's rewrite
of the guest, cached beside it). Usage: guestprof.py OUT_TXT IPS_TXT [HZ];
with perf's sampling frequency it gives CPU time per call too.
"""

import bisect
import collections
import hashlib
import glob
import os
import struct
import sys


def leb(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def wasm_names(path):
    """Returns (number of imported functions, local function count, {index: name})."""
    b = open(path, "rb").read()
    if b[:5] == b"adkrw":
        # sandbox's rewrite cache entry: a 52-byte header (rewritecache.go), then the module.
        b = b[52:]
    i, imports, nfuncs, names = 8, 0, 0, {}
    while i < len(b):
        sid = b[i]
        size, i = leb(b, i + 1)
        end = i + size
        if sid == 2:  # imports
            n, j = leb(b, i)
            for _ in range(n):
                for _ in range(2):  # module and field names
                    ln, j = leb(b, j)
                    j += ln
                kind = b[j]
                j += 1
                if kind == 0:
                    imports += 1
                    _, j = leb(b, j)
                elif kind == 1:  # table: reftype, limits
                    j += 1
                    flags, j = leb(b, j)
                    _, j = leb(b, j)
                    if flags & 1:
                        _, j = leb(b, j)
                elif kind == 2:  # memory: limits
                    flags, j = leb(b, j)
                    _, j = leb(b, j)
                    if flags & 1:
                        _, j = leb(b, j)
                else:  # global: type, mutability
                    j += 2
        elif sid == 3:
            nfuncs, _ = leb(b, i)
        elif sid == 0:
            ln, j = leb(b, i)
            if b[j:j + ln] == b"name":
                j += ln
                while j < end:
                    sub = b[j]
                    ssize, j = leb(b, j + 1)
                    if sub == 1:
                        n, k = leb(b, j)
                        for _ in range(n):
                            idx, k = leb(b, k)
                            ln2, k = leb(b, k)
                            names[idx] = b[k:k + ln2].decode("utf-8", "replace")
                            k += ln2
                    j += ssize
        i = end
    return imports, nfuncs, names


def compiled(path):
    b = open(path, "rb").read()
    if b[:6] != b"WAZEVO":
        return None
    i = 7 + b[6]
    n = struct.unpack_from("<I", b, i)[0]
    i += 4
    offsets = list(struct.unpack_from("<%dQ" % n, b, i))
    code_len = struct.unpack_from("<Q", b, i + 8 * n)[0]
    code = i + 8 * n + 8
    return offsets, code_len, hashlib.sha256(b[code:code + 4096]).hexdigest()


def main(out_txt, ips_txt, hz=0, top=30):
    regions, cache, calls, digest = [], None, 0, "*"
    for line in open(out_txt):
        f = line.split()
        if f[:1] == ["guestprof_exec"]:
            lo, hi = (int(x, 16) for x in f[1].split("-"))
            regions.append((lo, hi, f[2] if len(f) > 2 else None))
        elif f[:1] == ["guestprof_cache"]:
            cache = f[1]
        elif f[:1] == ["guestprof_calls"]:
            calls = int(f[1])
        elif f[:1] == ["guestprof_digest"]:
            digest = f[1]
    if cache is None:
        sys.exit("guestprof: TestGuestLoop printed no cache directory")
    # The module wazero compiled: the rewrite of the guest's digest (without
    # one, any rewrite of the same size as a compiled module below).
    rewrites = {}
    for path in sorted(glob.glob(os.path.join(cache, "adkhost-instrumented-*", digest + ".wasm")), key=os.path.getmtime, reverse=True):
        imp, nfuncs, nm = wasm_names(path)
        rewrites.setdefault(nfuncs, (imp, nm))
    if not rewrites:
        sys.exit("guestprof: no rewritten module %s in %s" % (digest, cache))
    # The compiled module whose code fills one of the executable mappings,
    # as the digest of its first bytes tells, with as many functions.
    found = None
    for path in sorted(glob.glob(os.path.join(cache, "wazero-*", "*")), key=os.path.getmtime, reverse=True):
        c = compiled(path)
        if c is None or len(c[0]) not in rewrites:
            continue
        for lo, hi, head in regions:
            if c[1] <= hi - lo < c[1] + (1 << 16) and (head is None or head == c[2]):
                found = (c[0], lo, hi)
                break
        if found:
            break
    if not found:
        sys.exit("guestprof: no compiled module in %s matches an executable mapping" % cache)
    offsets, lo, hi = found
    imports, names = rewrites[len(offsets)]
    order = sorted((o, k) for k, o in enumerate(offsets))
    starts = [o for o, _ in order]
    counts, total, guest = collections.Counter(), 0, 0
    for line in open(ips_txt):
        line = line.strip()
        if not line:
            continue
        total += 1
        ip = int(line, 16)
        if lo <= ip < hi:
            guest += 1
            j = bisect.bisect_right(starts, ip - lo) - 1
            k = order[j][1] if j >= 0 else -1
            counts[names.get(k + imports, "func[%d]" % k)] += 1
    print("samples: %d, in the guest's code: %d (%.0f%%)" % (total, guest, 100.0 * guest / max(total, 1)))
    per = 1e6 / hz / calls if hz and calls else 0
    if per:
        print("per call: %.1f us of CPU, %.1f us in the guest's code" % (total * per, guest * per))
    for name, n in counts.most_common(top):
        if per:
            print("%6d %5.1f%% %6.2f us  %s" % (n, 100.0 * n / max(guest, 1), n * per, name[:110]))
        else:
            print("%6d %5.1f%%  %s" % (n, 100.0 * n / max(guest, 1), name[:120]))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 0)
