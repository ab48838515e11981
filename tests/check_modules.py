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
   key-value adapter's shared header alone (cmp_kv_impl.h, which
   cmp_kv.cc, cmp_kv_files.cc and cmp_kv_resume.cc include; the last
   alone includes RocksDB's C++ headers), <zstd.h> by compaction/cmp_codec.c (the run codec)
   and input/in_source.c (the tools' .zst inputs),
   <xxhash.h> by common/nd_hash.c, libxml2 by bench/html_compare.c (the
   reference extractor), <opencc.h> by engine/text/fp_fold_zh.c;
5. no file of compaction/ or common/ longer than 800 lines;
6. no file of common/, compaction/ or engine/ calls getenv: the library
   reads no environment variable;
7. engine/ is rooms by role (engine/ROOM/): each room has one main header
   whose opening comment says "Room: ROOM/. It may call: A/, B/ (...)";
   a file of a room includes headers of, and calls functions defined in,
   only its own room and the rooms it may call; the rooms' declared calls
   form no circle, and neither do the calls between the engine's files
   (a call: a .c file naming a function another .c file defines);
8. the tools' shared components: input/ (the readers; every file named
   in_*) includes no header of cli/, tool/ or mpi/, and its format files
   (in_lines, in_jsonl, in_files, in_warc) none of each other's nor the
   dispatcher's (in_reader.h); tool/ (what neardup and neardup-mpi share)
   includes headers of input/ and tool/ only; mpi/ includes no header of
   cli/; and no meson.build compiles a source file of another folder;
9. server/ (`neardup serve`) is a room of its own: its files include, of
   the project's headers, only <neardup.h> and server/'s own, and no file
   of another folder includes a server/ header but cli/cmd_serve.c;
10. client/ (libneardup-client) likewise: of the project's headers only
   <neardup.h>, <neardup_client.h> and client/'s own, and no file of
   another folder includes a client/ header (callers and tests see
   <neardup_client.h>); no file of client/ over 800 lines.
"""
import os
import re
import sys

MAX_LINES = 800
LAYERS = ("common", "compaction", "input", "tool")
OWNERS = {
    "rocksdb/c.h": "compaction/cmp_kv_impl.h",
    # RocksDB's C++ API, for the one listener its C API cannot set
    "rocksdb/listener.h": "compaction/cmp_kv_resume.cc",
    "rocksdb/utilities/": "compaction/cmp_kv_resume.cc",
    # The library's run codec and the tools' reader of .zst inputs are
    # separate components (the library does not link input/, nor input/
    # the library's internals): each owns its use of zstd.
    "zstd.h": ("compaction/cmp_codec.c", "input/in_source.c"),
    "xxhash.h": "common/nd_hash.c",
    "libxml/": "bench/html_compare.c",
    "opencc.h": "engine/text/fp_fold_zh.c",
    # the tools' JSONL reader and the server's JSON layer (server/srv_json.h
    # declares the helpers srv_api.c defines; srv_fleet.c uses them)
    "jansson.h": ("input/in_jsonl.c", "server/srv_api.c", "server/srv_json.h"),
    "microhttpd.h": "server/srv_http.c",
    # bench_fingerprint reads its gzip'd corpora itself (not library code)
    "zlib.h": ("input/in_source.c", "bench/bench_fingerprint.c"),
    "simdjson": "input/in_json_fast.cpp",
}
FORMAT_FILES = ("in_lines", "in_jsonl", "in_files", "in_warc")
SCANNED = ("common", "compaction", "engine", "cli", "bench", "include", "mpi", "input", "tool",
           "server", "client")
# libneardup-client (client/): its internal header ncl.h owns <jansson.h>
# for the client's files, ncl_http.c owns libcurl.
OWNERS["jansson.h"] = OWNERS["jansson.h"] + ("client/ncl.h",)
OWNERS["curl/"] = "client/ncl_http.c"


def strip(text):
    """Text without comments, string and char literals, preprocessor lines."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"'(\\.|[^'\\\n])*'", "''", text)
    # a directive with its continuation lines (a multi-line #define)
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*$", " ", text, flags=re.M)
    text = re.sub(r'extern\s*""\s*\{', " ", text)  # C++ guards; their '}' is skipped below
    return re.sub(r'extern\s*""', " ", text)  # extern "C" before one definition


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


def all_defined(path):
    """Every function path defines, static ones too."""
    out = set()
    for h, body in top_level(strip(read(path))):
        if body:
            n = function_name(re.sub(r"^\s*(static\s+)?(inline\s+)?", "", h))
            if n:
                out.add(n)
    return out


def engine_files(root):
    """(room, file name) of every source and header under engine/ROOM/."""
    edir = os.path.join(root, "engine")
    out = []
    for room in sorted(os.listdir(edir)):
        if os.path.isdir(os.path.join(edir, room)):
            out += [(room, f) for f in sorted(os.listdir(os.path.join(edir, room)))
                    if f.endswith((".c", ".h", ".cc"))]
    return out


def find_cycle(edges):
    """One cycle of the graph edges (node -> set of nodes) as a list, or None."""
    state = {}

    def visit(n, path):
        state[n] = "open"
        for d in sorted(edges.get(n, ())):
            if state.get(d) == "open":
                return path[path.index(d):] + [d]
            if d not in state:
                c = visit(d, path + [d])
                if c:
                    return c
        state[n] = "done"
        return None

    for n in sorted(edges):
        if n not in state:
            c = visit(n, [n])
            if c:
                return c
    return None


def check_rooms(root, errors):
    """Rule 7: the rooms of engine/ and the calls between its files."""
    files = engine_files(root)
    rooms = sorted({r for r, _ in files})
    path = lambda r, f: os.path.join(root, "engine", r, f)
    room_of = {f: r for r, f in files}
    may = {}
    for room in rooms:
        mains = []
        for r, f in files:
            if r != room or not f.endswith(".h"):
                continue
            m = re.match(r"\s*/\*(.*?)\*/", read(path(r, f)), flags=re.S)
            text = " ".join(l.strip().lstrip("*").strip() for l in m.group(1).splitlines()) if m else ""
            d = re.search(r"Room: (\w+)/\. It may call: ([^(]*?)(\(|\.\s|\.$)", text)
            if d:
                mains.append(f)
                if d.group(1) != room:
                    errors.append(f"engine/{room}/{f} says it is the main header of room {d.group(1)}/")
                may[room] = set(re.findall(r"(\w+)/", d.group(2))) & set(rooms)
        if len(mains) != 1:
            errors.append(f"engine/{room}/ has {len(mains)} main headers ('Room: {room}/. It may call: ...'); it needs one")
            may.setdefault(room, set())
    cyc = find_cycle(may)
    if cyc:
        errors.append("the rooms' declared calls form a circle: " + " -> ".join(cyc))
    # includes across rooms
    for r, f in files:
        for kind, inc in includes(path(r, f)):
            other = room_of.get(os.path.basename(inc))
            if kind == '"' and other and other != r and other not in may.get(r, ()):
                errors.append(f"engine/{r}/{f} includes {inc} of room {other}/, which room {r}/ may not call")
    # calls between files
    sources = [(r, f) for r, f in files if f.endswith((".c", ".cc"))]
    owner = {}
    for r, f in sources:
        for fn in defined(path(r, f)):
            owner[fn] = f
    calls = {}
    for r, f in sources:
        own = all_defined(path(r, f))
        names = set(re.findall(r"\b[A-Za-z_]\w*\b", strip(read(path(r, f)))))
        calls[f] = {owner[n] for n in names - own if n in owner and owner[n] != f}
        for g in sorted(calls[f]):
            if room_of[g] != r and room_of[g] not in may.get(r, ()):
                fns = sorted(n for n in names - own if owner.get(n) == g)
                errors.append(f"engine/{r}/{f} calls {', '.join(fns)} of engine/{room_of[g]}/{g}, "
                              f"a room {r}/ may not call")
    cyc = find_cycle(calls)
    if cyc:
        errors.append("the engine's files call each other in a circle: " + " -> ".join(cyc))
    return calls


def check_components(root, errors):
    """Rule 8: input/, tool/ and mpi/ include downward; meson.build files
    compile their own folder's sources only."""
    names = {d: set(os.listdir(os.path.join(root, d))) for d in ("input", "tool", "cli", "mpi")}
    allowed = {"input": ("input",), "tool": ("input", "tool"), "mpi": ("input", "tool", "mpi")}
    for d, own in allowed.items():
        for f in sorted(names[d]):
            if not f.endswith((".c", ".h", ".cpp")):
                continue
            if d == "input" and not f.startswith("in_"):
                errors.append(f"input/{f}: every file of input/ is named in_*")
            for kind, inc in includes(os.path.join(root, d, f)):
                base = os.path.basename(inc)
                if kind != '"' or base == "neardup.h":
                    continue
                home = [h for h in ("input", "tool", "cli", "mpi") if base in names[h]]
                if home and not set(home) & set(own):
                    errors.append(f"{d}/{f} includes {inc} of {home[0]}/, which {d}/ may not include")
                stem = os.path.splitext(f)[0]
                if d == "input" and stem in FORMAT_FILES and os.path.splitext(base)[0] != stem and \
                        os.path.splitext(base)[0] in FORMAT_FILES + ("in_reader",):
                    errors.append(f"input/{f} includes {inc}: a format includes no other format "
                                  "nor the dispatcher")
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith(("build", "."))]
        if "meson.build" not in files:
            continue
        text = read(os.path.join(dirpath, "meson.build"))
        for src in re.findall(r"'(\.\./[^']+\.(?:c|cc|cpp))'", text):
            errors.append(f"{os.path.relpath(os.path.join(dirpath, 'meson.build'), root)} "
                          f"compiles {src}, a source of another folder")


def check_server(root, errors):
    """Rule 9: server/ sees the library through <neardup.h> only."""
    sdir = os.path.join(root, "server")
    if not os.path.isdir(sdir):
        return
    own = {f for f in os.listdir(sdir) if f.endswith(".h")}
    project = set()
    for d in SCANNED + ("python",):
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            project |= {f for f in files if f.endswith(".h")}
    for f in sorted(os.listdir(sdir)):
        if not f.endswith((".c", ".h")):
            continue
        for kind, inc in includes(os.path.join(sdir, f)):
            base = os.path.basename(inc)
            if base == "neardup.h" or base in own:
                continue
            if kind == '"' or base in project - own:
                errors.append(f"server/{f} includes {inc}: server/ may include <neardup.h> "
                              "and its own headers only")
    for d in SCANNED:
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            for f in files:
                rel = os.path.relpath(os.path.join(dirpath, f), root)
                if rel.startswith("server/") or not f.endswith((".c", ".h", ".cc", ".cpp")):
                    continue
                for kind, inc in includes(os.path.join(dirpath, f)):
                    if kind == '"' and os.path.basename(inc) in own and rel != "cli/cmd_serve.c":
                        errors.append(f"{rel} includes {inc} of server/: only cli/cmd_serve.c may")


def check_client(root, errors):
    """Rule 10: client/ sees the project through the public headers only."""
    cdir = os.path.join(root, "client")
    if not os.path.isdir(cdir):
        return
    own = {f for f in os.listdir(cdir) if f.endswith(".h")}
    for f in sorted(os.listdir(cdir)):
        if not f.endswith((".c", ".h")):
            continue
        path = os.path.join(cdir, f)
        if read(path).count("\n") > MAX_LINES:
            errors.append(f"client/{f} has more than {MAX_LINES} lines")
        for kind, inc in includes(path):
            base = os.path.basename(inc)
            if base in ("neardup.h", "neardup_client.h") or base in own:
                continue
            if kind == '"':
                errors.append(f"client/{f} includes {inc}: client/ may include <neardup.h>, "
                              "<neardup_client.h> and its own headers only")
    for d in SCANNED + ("tests",):
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            for f in files:
                rel = os.path.relpath(os.path.join(dirpath, f), root)
                if rel.startswith("client/") or not f.endswith((".c", ".h", ".cc", ".cpp")):
                    continue
                for kind, inc in includes(os.path.join(dirpath, f)):
                    if kind == '"' and os.path.basename(inc) in own:
                        errors.append(f"{rel} includes {inc} of client/: only client/ may")


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
    cxx = {}  # modules whose source is C++: name -> .cc or .cpp
    for layer in LAYERS:
        for f in sorted(os.listdir(os.path.join(root, layer))):
            base, ext = os.path.splitext(f)
            if ext in (".h", ".c", ".cc", ".cpp"):
                layer_, h, c = modules.get(base, (layer, False, False))
                modules[base] = (layer, h or ext == ".h", c or ext in (".c", ".cc", ".cpp"))
                if ext in (".cc", ".cpp"):
                    cxx[base] = ext

    # 1. headers and sources agree; 5. sizes
    for name, (layer, has_h, has_c) in sorted(modules.items()):
        h = os.path.join(root, layer, name + ".h")
        c = os.path.join(root, layer, name + cxx.get(name, ".c"))
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
    library = [(layer, f) for layer in ("common", "compaction")
               for f in sorted(os.listdir(os.path.join(root, layer)))]
    library += [("engine/" + r, f) for r, f in engine_files(root)]
    for layer, fname in library:
        if fname.endswith((".c", ".cc", ".h")):
            text = strip(read(os.path.join(root, layer, fname)))
            if re.search(r"\b(secure_)?getenv\s*\(", text):
                errors.append(f"{layer}/{fname} reads an environment variable (getenv)")

    # 2. the include graph of the modules
    edges = {}
    for name, (layer, has_h, has_c) in modules.items():
        deps = set()
        for ext, present in ((".h", has_h), (cxx.get(name, ".c"), has_c)):
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
    for r, f in engine_files(root):
        for kind, inc in includes(os.path.join(root, "engine", r, f)):
            dep = os.path.splitext(os.path.basename(inc))[0]
            if kind == '"' and dep in compaction and dep != "storage":
                errors.append(f"engine/{r}/{f} includes {inc}: engine/ uses compaction/ through storage.h only")

    # 7. the rooms of engine/
    calls = check_rooms(root, errors)

    # 8. the tools' shared components and the build's folders
    check_components(root, errors)

    # 9. server/ calls the public API only
    check_server(root, errors)
    check_client(root, errors)

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
        for f in sorted(calls):
            print(f"engine: {f} calls {', '.join(sorted(calls[f])) or '-'}")
    for e in errors:
        print("check_modules: " + e, file=sys.stderr)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
