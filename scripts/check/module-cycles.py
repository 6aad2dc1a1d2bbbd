#!/usr/bin/env python3
"""Fails when the modules of crates/core import each other in a cycle.

A module is a file under crates/core/src (mod.rs stands for its folder). An
edge A -> B is a `use` or path reference (`crate::`, `super::`, `self::`, or
through a child module A declares) from A's code, tests excluded, to an item
of B. `mod x;` declarations alone do not count, nor references to the crate
root, which only declares modules and re-exports. `--print` lists the edges.

It also fails on an arrow back up to a hub: the hubs (`store`, the Store;
`store::backend`, the seam list naming every feature's seam) sit above
everything they import, so no module a hub reaches may import that hub. A
folder a hub imports counts whole (its mod.rs and every file under it): a
file of that folder importing the hub runs back up even when its mod.rs
does not. `--root DIR` checks another tree's crates/core/src.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "crates" / "core" / "src"
if "--root" in sys.argv:
    ROOT = Path(sys.argv[sys.argv.index("--root") + 1]).resolve()

HUBS = [("store",), ("store", "backend")]


def module_of(path: Path) -> tuple:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return tuple(parts)


def code_without_tests(text: str) -> str:
    cut = text.find("#[cfg(test)]")
    return text if cut < 0 else text[:cut]


def main() -> int:
    files = sorted(ROOT.rglob("*.rs"))
    modules = {module_of(f): f for f in files}
    known = set(modules)
    edges = {m: set() for m in modules}
    ref = re.compile(r"\b((?:crate|super|self)(?:::(?:super|[A-Za-z_][A-Za-z0-9_]*))+)")
    for module, file in modules.items():
        is_dir = file.name in ("mod.rs", "lib.rs")
        text = code_without_tests(file.read_text())
        # `use super::{a, b}` lists: expand the braces one level.
        for group in re.finditer(r"use\s+((?:crate|super|self)(?:::\w+)*)::\{([^}]*)\}", text):
            for name in group.group(2).split(","):
                name = name.strip().split(" ")[0]
                if name:
                    text += f"\n{group.group(1)}::{name}"
        # Paths through a child module declared here (`sqlite::SqliteBackend`).
        children = re.findall(r"^\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+([a-z_][a-z0-9_]*)\s*;", text, re.M)
        for child in children:
            for _ in re.finditer(rf"(?<![:\w]){child}::", text):
                target = (module if is_dir else module) + (child,)
                if target in known:
                    edges[module].add(target)
        for match in ref.finditer(text):
            parts = match.group(1).split("::")
            parent = module if is_dir else module[:-1]
            base = list(parent)
            i = 0
            if parts[0] == "crate":
                base, i = [], 1
            elif parts[0] == "self":
                base, i = list(module), 1
            while i < len(parts) and parts[i] == "super":
                base = base[:-1]
                i += 1
            if parts[0] == "super":
                # from a file module, `super` is the folder module itself
                base = list(parent) if not is_dir else list(module[:-1])
                i = 1
                while i < len(parts) and parts[i] == "super":
                    base = base[:-1]
                    i += 1
            rest = parts[i:]
            target = None
            for n in range(len(rest), -1, -1):
                candidate = tuple(base + rest[:n])
                if candidate in known:
                    target = candidate
                    break
            # The crate root only declares modules and re-exports their items.
            if target is not None and target != module and target != ():
                edges[module].add(target)
    # Tarjan's strongly connected components.
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(component)

    sys.setrecursionlimit(10000)
    for v in modules:
        if v not in index:
            visit(v)
    name = lambda m: "::".join(m) or "crate"
    if "--print" in sys.argv:
        for m in sorted(edges):
            print(f"{name(m)} -> {', '.join(sorted(name(t) for t in edges[m]))}")
    for component in cycles:
        print("cycle:", " <-> ".join(sorted(name(m) for m in component)))
    back_up = arrows_back_up(modules, edges)
    for source, hub in back_up:
        print(f"arrow back up: {name(source)} -> {name(hub)}")
    return 1 if cycles or back_up else 0


def arrows_back_up(modules: dict, edges: dict) -> list:
    """The edges into each hub from a module that hub reaches."""
    folders = {m for m, f in modules.items() if f.name == "mod.rs"}
    found = []
    for hub in HUBS:
        if hub not in edges:
            continue
        todo = []
        for target in edges[hub]:
            todo.append(target)
            if target in folders:
                todo.extend(m for m in modules if m[: len(target)] == target)
        reached = set()
        while todo:
            module = todo.pop()
            if module not in reached and module != hub:
                reached.add(module)
                todo.extend(edges[module])
        found.extend((m, hub) for m in sorted(reached) if hub in edges[m])
    return found

if __name__ == "__main__":
    sys.exit(main())
