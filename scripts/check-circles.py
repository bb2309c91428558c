#!/usr/bin/env python3
"""Import circles between the modules of every crate of the workspace, and folders
that import each other.

Each module file is a room; a `use` of a `crate::a::b`, `super::b` or `self::b` path,
or of a child from its parent (`use load::rows`), and such a path written in code
(`crate::tls::TlsCache` in a field's type) are arrows to the module they name
(`--use-lines`: only `use`s count). Two kinds of loop are told apart:

- a circle: modules that reach each other without going through a parent, e.g.
  `options.rs -> tls.rs -> options.rs`. There must be none (exit 1, each listed
  with the arrows inside it and the first path that makes each);
- an arrow back up: a child that takes something from its own parent or ancestor
  (`use super::X` in `init/load.rs` for a type defined in `init/mod.rs`): the parent
  is used as a drawer. Listed with `-v`, not an error.

A third kind is a layering error: two top-level folders of a crate (`src/bench/`,
`src/capacity/`) with arrows between them both ways, even through different files
(`bench/plan.rs -> capacity/plan.rs` and `capacity/runner.rs -> bench/mod.rs`). A
folder is a floor of the house: one imports the other, never both. In the crates of
`LAYERED` there must be none (exit 1, each pair listed with the first arrow each
way); `-v` lists the other crates' pairs too.

Test code is left out: `tests.rs` files, modules declared under `#[cfg(test)]`, and
everything from a file's first `#[cfg(test)] mod ... {` on.
Usage: scripts/check-circles.py [-v] [--use-lines]
"""
import os
import re
import sys

ROOTS = ["src/lib.rs", "src/main.rs", "src/bin/pgbench-report/main.rs"]
ROOTS += sorted(
    f"crates/{c}/src/lib.rs"
    for c in os.listdir("crates")
    if os.path.exists(f"crates/{c}/src/lib.rs")
)
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
# The crates whose folders must import one way (`-v` lists the others' two-way pairs).
LAYERED = ["src/lib.rs"]


def child_dir(path, is_root):
    """The directory where the children of the module in `path` live."""
    d, name = os.path.split(path)
    if is_root or name == "mod.rs":
        return d
    return os.path.join(d, name[:-3])


def load(path):
    text = open(path, encoding="utf-8").read()
    cut = re.search(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text)
    if cut:
        text = text[: cut.start()]
    text = re.sub(r"//[^\n]*", "", text)
    return text


def expand_use(tree):
    """`a::{b, c::{d, e}}` -> ["a::b", "a::c::d", "a::c::e"] (no braces: itself)."""
    tree = tree.strip()
    i = tree.find("{")
    if i < 0:
        return [re.sub(r"\s+as\s+\w+$", "", tree)]
    prefix, inner = tree[:i], tree[i + 1 : tree.rindex("}")]
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        if p.strip():
            out += [prefix + q for q in expand_use(p)]
    return out


class Crate:
    def __init__(self, root, all_paths=False):
        self.root = root
        self.all_paths = all_paths
        self.modules = {}  # module path tuple -> file
        self.walk(root, (), True)
        self.files = {f: m for m, f in self.modules.items()}

    def walk(self, path, modpath, is_root):
        self.modules[modpath] = path
        d = child_dir(path, is_root)
        decls = re.findall(
            rf"^(\s*#\[cfg\(test\)\]\s*)?\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+({IDENT})\s*;", load(path), re.M
        )
        for test_only, name in decls:
            if test_only:
                continue
            for cand in (os.path.join(d, name + ".rs"), os.path.join(d, name, "mod.rs")):
                if os.path.exists(cand) and not cand.endswith("tests.rs"):
                    self.walk(cand, modpath + (name,), False)
                    break

    def resolve(self, here, segments):
        """The module a path names, from the module `here`: the longest known prefix."""
        if not segments:
            return None
        head = segments[0]
        if head == "crate":
            base, rest = (), segments[1:]
        elif head in ("super", "self"):
            base, rest = here, segments
            while rest and rest[0] in ("super", "self"):
                if rest[0] == "super":
                    base = base[:-1]
                rest = rest[1:]
        else:  # a child named from its parent (`load::rows`)
            if here + (head,) not in self.modules:
                return None
            base, rest = here, segments
        best = base
        for i in range(len(rest)):
            cand = base + tuple(rest[: i + 1])
            if cand in self.modules:
                best = cand
            else:
                break
        return best

    def arrows(self):
        edges, self.why = {}, {}  # why[(from, to)]: the first path naming `to`
        for mod, path in self.modules.items():
            text = load(path)
            paths = []
            for stmt in re.findall(r"\buse\s+([^;]+);", text):
                paths += expand_use(stmt)
            if self.all_paths:
                text_no_use = re.sub(r"\buse\s+[^;]+;", "", text)
                paths += re.findall(rf"\b(?:crate|super|self|{IDENT})(?:::{IDENT})+", text_no_use)
            targets = set()
            for p in paths:
                segs = [s for s in re.split(r"\s*::\s*", p.strip()) if s and s != "*"]
                t = self.resolve(mod, segs)
                if t is not None and t != mod:
                    targets.add(t)
                    self.why.setdefault((mod, t), p.strip())
            edges[mod] = targets
        return edges


def sccs(nodes, edges):
    """Tarjan's strongly connected components with more than one node."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return out


def folder_pairs(crate, edges):
    """Pairs of top-level folders of `crate` with arrows both ways: {(a, b): (why a->b, why b->a)}."""
    folders = {
        m[0]
        for m, f in crate.modules.items()
        if len(m) == 1 and os.path.basename(f) == "mod.rs"
    }
    first = {}  # (folder, folder) -> the first arrow, as "file -> file (path)"
    for m in sorted(edges, key=lambda m: crate.modules[m]):
        for t in sorted(edges[m], key=lambda t: crate.modules[t]):
            if not m or not t or m[0] == t[0] or m[0] not in folders or t[0] not in folders:
                continue
            why = " ".join(crate.why[(m, t)].split())
            first.setdefault((m[0], t[0]), f"{crate.modules[m]} -> {crate.modules[t]}  ({why})")
    return {
        (a, b): (first[(a, b)], first[(b, a)])
        for (a, b) in first
        if a < b and (b, a) in first
    }


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    verbose = "-v" in sys.argv[1:]
    all_paths = "--use-lines" not in sys.argv[1:]
    circles = 0
    for root in ROOTS:
        crate = Crate(root, all_paths)
        edges = crate.arrows()
        up = {m: {t for t in ts if m[: len(t)] == t} for m, ts in edges.items()}
        forward = {m: ts - up[m] for m, ts in edges.items()}
        name = lambda m: crate.modules[m]
        for comp in sccs(list(crate.modules), forward):
            circles += 1
            print(f"circle in {root}: " + " <-> ".join(sorted(name(m) for m in comp)))
            for m in sorted(comp, key=name):
                for t in sorted(forward[m] & set(comp), key=name):
                    print(f"  {name(m)} -> {name(t)}  ({' '.join(crate.why[(m, t)].split())})")
        for (a, b), (ab, ba) in sorted(folder_pairs(crate, edges).items()):
            if root not in LAYERED and not verbose:
                continue
            circles += root in LAYERED
            print(f"folders importing each other in {root}: {a}/ <-> {b}/")
            print(f"  {ab}")
            print(f"  {ba}")
        n_up = sum(len(v) for v in up.values())
        n_edges = sum(len(v) for v in edges.values())
        if verbose:
            for m, ts in sorted(up.items()):
                for t in sorted(ts):
                    print(f"  arrow back up: {name(m)} -> {name(t)}")
            print(f"{root}: {len(crate.modules)} modules, {n_edges} arrows, {n_up} back up")
    print(f"check-circles: {circles} circle(s) or two-way folder pair(s) in {len(ROOTS)} crates")
    return 1 if circles else 0


if __name__ == "__main__":
    sys.exit(main())
