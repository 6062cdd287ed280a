#!/usr/bin/env python3
"""The module map of docs/architecture.md, made from Package.swift.

Two blocks of docs/architecture.md are generated, never written by hand:
  - the module diagram (Mermaid): every target under Sources/, an arrow from each to the lab
    modules it depends on, without the arrows another path already implies (A -> C is left
    out when A -> B -> C is drawn), coloured by the product it ships in;
  - "What each module may import": one row per target, its lab modules and its packages'
    modules, exactly its dependencies in Package.swift. ArchitectureTests checks every import
    under Sources/ against this table, so an import is allowed only where the manifest says so.

  python3 scripts/module-map.py --write docs/architecture.md   # rewrite both blocks
  python3 scripts/module-map.py --check docs/architecture.md   # exit 1, with a diff, if stale

The manifest is read through `swift package dump-package` (the manifest evaluated, no build).
"""
import difflib
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
BLOCKS = ("module-diagram", "import-table")


def manifest():
    text = subprocess.run(
        ["swift", "package", "dump-package"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    return json.loads(text)


def dependencies(target):
    """(lab targets, package products) a target depends on, in the manifest's order."""
    lab, products = [], []
    for dependency in target["dependencies"]:
        if "byName" in dependency:
            lab.append(dependency["byName"][0])
        elif "target" in dependency:
            lab.append(dependency["target"][0])
        elif "product" in dependency:
            products.append(dependency["product"][0])
    return lab, products


def modules(package):
    """The targets under Sources/ (not tests, not test support, not build plugins), by name."""
    found = {}
    for target in package["targets"]:
        if target["type"] in ("test", "plugin"):
            continue
        if (target.get("path") or "").startswith("Tests/"):
            continue
        found[target["name"]] = target
    return found


def reduced_edges(graph):
    """Each module's dependencies without those reachable through another of them."""

    def reachable(start):
        seen, stack = set(), list(graph.get(start, []))
        while stack:
            node = stack.pop()
            if node not in seen:
                seen.add(node)
                stack.extend(graph.get(node, []))
        return seen

    reduced = {}
    for module, targets in graph.items():
        implied = set()
        for target in targets:
            implied |= reachable(target)
        reduced[module] = [target for target in targets if target not in implied]
    return reduced


def shipping_product(package, names):
    """The first library product that names each target: where a user gets it."""
    product = {}
    for entry in package["products"]:
        kind = entry["type"]
        label = entry["name"] if "library" in kind else "executables"
        for target in entry["targets"]:
            product.setdefault(target, label)
    return {name: product.get(name, "internal") for name in names}


STYLES = {
    "LabKit": "fill:#dbeafe,stroke:#1d4ed8",
    "executables": "fill:#fef3c7,stroke:#b45309",
    "internal": "fill:#f3f4f6,stroke:#6b7280",
}


def diagram(package):
    found = modules(package)
    graph = {name: [d for d in dependencies(t)[0] if d in found] for name, t in found.items()}
    edges = reduced_edges(graph)
    products = shipping_product(package, found)
    # What LabKit re-exports ships in LabKit too.
    for name in dependencies(found["LabKit"])[0]:
        if products.get(name) == "internal":
            products[name] = "LabKit"
    lines = ["```mermaid", "flowchart BT"]
    for name in sorted(found):
        lines.append(f"    {name}[{name}]")
    for name in sorted(edges):
        for target in sorted(edges[name]):
            lines.append(f"    {name} --> {target}")
    for label, style in STYLES.items():
        members = sorted(n for n, p in products.items() if p == label)
        if members:
            lines.append(f"    classDef {label.lower()} {style}")
            lines.append(f"    class {','.join(members)} {label.lower()}")
    others = sorted(n for n, p in products.items() if p not in STYLES)
    if others:
        lines.append("    classDef product fill:#dcfce7,stroke:#15803d")
        lines.append(f"    class {','.join(others)} product")
    lines.append("```")
    return "\n".join(lines)


def table(package):
    found = modules(package)
    lines = [
        "| module | may import, lab modules | may import, packages' modules |",
        "|---|---|---|",
    ]
    for name in sorted(found, key=lambda n: (not n.startswith("CLab"), n)):
        lab, products = dependencies(found[name])
        cell = lambda names: ", ".join(f"`{n}`" for n in names) if names else "—"
        lines.append(f"| `{name}` | {cell(lab)} | {cell(products)} |")
    return "\n".join(lines)


def replace(text, block, body):
    start, end = f"<!-- {block}: generated by scripts/module-map.py -->", f"<!-- /{block} -->"
    if start not in text or end not in text:
        raise SystemExit(f"docs/architecture.md has no {start} … {end} block")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{body}\n{end}{tail}"


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("--write", "--check"):
        raise SystemExit(__doc__)
    path = pathlib.Path(sys.argv[2])
    text = path.read_text()
    package = manifest()
    made = replace(replace(text, BLOCKS[0], diagram(package)), BLOCKS[1], table(package))
    if sys.argv[1] == "--write":
        path.write_text(made)
        return
    if made != text:
        sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), made.splitlines(True), str(path), "generated"))
        print(f"\n{path}: the module map is not Package.swift's: python3 scripts/module-map.py --write {path}")
        sys.exit(1)


if __name__ == "__main__":
    main()
