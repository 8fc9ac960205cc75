#!/usr/bin/env python3
# The folder graph of Sources/StoragePolicy by type names: which folder names types declared (at top level) in which
# other. With an order (bottom first, comma-separated), an edge from a folder to one above it is marked BACK EDGE with
# the files that make it. A heuristic (type names only, no compiler); the target split makes it a compile error.
#   scripts/layers.py Sources/StoragePolicy Platform,Base,FileSystem,YAML,Policy,Plan,Evaluation,Apply,Reports,Scheduling,Library,.
import os, re, sys, collections
root = sys.argv[1] if len(sys.argv) > 1 else "Sources/StoragePolicy"
decl = re.compile(r'^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private|final|indirect|nonisolated|open)\s+)*(?:struct|class|enum|protocol|typealias|actor)\s+([A-Z]\w*)', re.M)
files = {}
for folder, _, names in os.walk(root):
    for n in names:
        if n.endswith(".swift"):
            p = os.path.join(folder, n)
            rel = os.path.relpath(p, root)
            top = rel.split(os.sep)[0] if os.sep in rel else "."
            files[p] = (top, open(p, encoding="utf-8", errors="replace").read())
owner = {}
for p, (top, text) in files.items():
    for m in decl.finditer(text):
        # nested types are found too; keep the first (outer files usually)
        owner.setdefault(m.group(1), set()).add(top)
strip = re.compile(r'//[^\n]*|"(?:\\.|[^"\\\n])*"')
edges = collections.defaultdict(lambda: collections.defaultdict(set))
nested = re.compile(r'^\s+(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private|final|indirect|nonisolated|open)\s+)*(?:struct|class|enum|protocol|typealias|actor)\s+([A-Z]\w*)', re.M)
for p, (top, text) in files.items():
    body = strip.sub("", text)
    own = set(nested.findall(text))  # a nested type of this file shadows a top-level one of the same name
    for tok in set(re.findall(r'\b[A-Z]\w*\b', body)) - own:
        for o in owner.get(tok, ()):
            if o != top and top not in owner.get(tok, ()):
                edges[top][o].add((tok, os.path.relpath(p, root)))
order = sys.argv[2].split(",") if len(sys.argv) > 2 else None
for a in sorted(edges):
    for b in sorted(edges[a]):
        mark = ""
        if order and a in order and b in order and order.index(b) > order.index(a):
            mark = "  <-- BACK EDGE"
        toks = sorted({t for t, _ in edges[a][b]})
        print(f"{a} -> {b}{mark}: {', '.join(toks[:12])}{' ...' if len(toks) > 12 else ''}")
        if mark:
            for t, f in sorted(edges[a][b]): print(f"      {t} in {f}")
