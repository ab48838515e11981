#!/usr/bin/env python3
"""check_modules.py — the layout rules of the storage layer, checked.

  check_modules.py SRCDIR           check; exit 1 and say what is wrong
  check_modules.py SRCDIR --graph   also print who includes whom

A module of compaction/ or common/ is a pair X.h / X.c (or a header
alone, which then declares no function). The rules (docs/layout.md, "Layout
and dependency rules"):

1. one header per module, declaring exactly what its own .c defines:
   every function X.h declares is defined in X.c, and every function X.c
   defines outside the file (not static) is declared in X.h (or, for the
   public API, in include/neardup.h);
2. no include cycle between the modules of compaction/ and common/, and
   no module of compaction/ includes storage.h, the header engine/ uses;
3. engine/ includes no header of compaction/ but storage.h;
4. one owner per dependency: <rocksdb/c.h> is included by the
   key-value adapter alone (cmp_kv.cc, cmp_kv_files.cc and their shared
   cmp_kv_impl.h), <zstd.h> by compaction/cmp_codec.c,
   <xxhash.h> by common/nd_hash.c, libxml2 by engine/fp_html.c;
5. no file of compaction/ or common/ longer than 800 lines;
6. no file of common/, compaction/ or engine/ calls getenv: the library
   reads no environment variable.
"""
import os
import re
import sys

MAX_LINES = 800
LAYERS = ("common", "compaction")
OWNERS = {
    "rocksdb/c.h": ("compaction/cmp_kv.cc", "compaction/cmp_kv_files.cc",
                    "compaction/cmp_kv_impl.h"),
    "zstd.h": "compaction/cmp_codec.c",
    "xxhash.h": "common/nd_hash.c",
    "libxml/": "engine/fp_html.c",
}
SCANNED = ("common", "compaction", "engine", "cli", "bench", "include", "mpi")


def strip(text):
    """Text without comments, string and char literals, preprocessor lines."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"'(\\.|[^'\\\n])*'", "''", text)
    text = re.sub(r"^\s*#.*(\\\n.*)*$", " ", text, flags=re.M)
    return re.sub(r'extern\s*""\s*\{', " ", text)  # C++ guards; their '}' is skipped below


def top_level(text):
    """(head, has_body) for each top-level statement: a declaration ending
    in ';' or a definition followed by a braced body."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c == "{":
            if depth == 0:
                out.append((text[start:i], True))
            depth += 1
        elif c == "}":
            if depth == 0:
                start = i + 1
                continue
            depth -= 1
            if depth == 0:
                start = i + 1
        elif c == ";" and depth == 0:
            out.append((text[start:i], False))
            start = i + 1
    return out


def function_name(head):
    """The function a statement head declares or defines, or None."""
    head = " ".join(head.split())
    if not head or re.match(r"(typedef|static|struct \w+ ?$|enum|union)\b", head):
        return None
    if head.startswith(("struct", "enum", "union")) and "(" not in head:
        return None
    m = re.match(r"^[\w\s\*]*?\b([A-Za-z_]\w*)\s*\(", head)
    if not m or "=" in head.split("(")[0]:
        return None
    return m.group(1)


def declared(path):
    return {n for h, body in top_level(strip(read(path))) if not body
            for n in [function_name(h)] if n}


def defined(path):
    return {n for h, body in top_level(strip(read(path))) if body
            for n in [function_name(h)] if n}


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def includes(path):
    return re.findall(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', read(path), flags=re.M)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    graph = "--graph" in sys.argv[2:]
    errors = []
    public = declared(os.path.join(root, "include", "neardup.h"))

    modules = {}  # name -> (layer, has_h, has_c)
    cxx = set()  # modules whose source is C++ (.cc)
    for layer in LAYERS:
        for f in sorted(os.listdir(os.path.join(root, layer))):
            base, ext = os.path.splitext(f)
            if ext in (".h", ".c", ".cc"):
                layer_, h, c = modules.get(base, (layer, False, False))
                modules[base] = (layer, h or ext == ".h", c or ext in (".c", ".cc"))
                if ext == ".cc":
                    cxx.add(base)

    # 1. headers and sources agree; 5. sizes
    for name, (layer, has_h, has_c) in sorted(modules.items()):
        h = os.path.join(root, layer, name + ".h")
        c = os.path.join(root, layer, name + (".cc" if name in cxx else ".c"))
        decl = declared(h) if has_h else set()
        defn = defined(c) if has_c else set()
        for fn in sorted(decl - defn):
            errors.append(f"{layer}/{name}.h declares {fn}, which {layer}/{name}.c does not define")
        for fn in sorted(defn - decl - public):
            errors.append(f"{layer}/{name}.c defines {fn}, which {layer}/{name}.h does not declare")
        if has_c and not has_h:
            errors.append(f"{layer}/{name}.c has no header of its own")
        for path in (h, c):
            if os.path.exists(path):
                n = read(path).count("\n")
                if n > MAX_LINES:
                    errors.append(f"{os.path.relpath(path, root)} has {n} lines (at most {MAX_LINES})")

    # 6. the library reads no environment variable (issue 35: options only;
    #    the CLI maps variables such as TMPDIR or ND_BATCH_THREADS to them)
    for layer in ("common", "compaction", "engine"):
        for fname in sorted(os.listdir(os.path.join(root, layer))):
            if fname.endswith((".c", ".cc", ".h")):
                text = strip(read(os.path.join(root, layer, fname)))
                if re.search(r"\b(secure_)?getenv\s*\(", text):
                    errors.append(f"{layer}/{fname} reads an environment variable (getenv)")

    # 2. the include graph of the modules
    edges = {}
    for name, (layer, has_h, has_c) in modules.items():
        deps = set()
        for ext, present in ((".h", has_h), (".cc" if name in cxx else ".c", has_c)):
            if not present:
                continue
            for kind, inc in includes(os.path.join(root, layer, name + ext)):
                dep = os.path.splitext(os.path.basename(inc))[0]
                if kind == '"' and dep in modules and dep != name:
                    deps.add(dep)
        edges[name] = deps
        if layer == "compaction" and name != "storage" and "storage" in deps:
            errors.append(f"compaction/{name} includes storage.h, the header of engine/")
    state = {}

    def visit(n, path):
        state[n] = "open"
        for d in sorted(edges[n]):
            if state.get(d) == "open":
                cyc = path[path.index(d):] + [d]
                errors.append("include cycle: " + " -> ".join(cyc))
            elif d not in state:
                visit(d, path + [d])
        state[n] = "done"

    for n in sorted(edges):
        if n not in state:
            visit(n, [n])

    # 3. engine/ sees compaction/ through storage.h only
    compaction = {b for b, (layer, _, _) in modules.items() if layer == "compaction"}
    edir = os.path.join(root, "engine")
    for f in sorted(os.listdir(edir)):
        for kind, inc in includes(os.path.join(edir, f)):
            dep = os.path.splitext(os.path.basename(inc))[0]
            if kind == '"' and dep in compaction and dep != "storage":
                errors.append(f"engine/{f} includes {inc}: engine/ uses compaction/ through storage.h only")

    # 4. one owner per dependency
    for d in SCANNED:
        top = os.path.join(root, d)
        if not os.path.isdir(top):
            continue
        for dirpath, _, files in os.walk(top):
            for f in files:
                if not f.endswith((".c", ".h", ".cc", ".cpp")):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                for kind, inc in includes(path):
                    for dep, owner in OWNERS.items():
                        if kind == "<" and inc.startswith(dep) and rel not in (owner if isinstance(owner, tuple) else (owner,)):
                            errors.append(f"{rel} includes <{inc}>: only {owner} may")

    if graph:
        for n in sorted(edges, key=lambda m: (modules[m][0], m)):
            print(f"{modules[n][0]}/{n}: {', '.join(sorted(edges[n])) or '-'}")
    for e in errors:
        print("check_modules: " + e, file=sys.stderr)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
