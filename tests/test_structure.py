"""The integration's shape: no import circle, small modules, each with a docstring.

And the engine's rooms: they meet through their faces, each face only
gathers, the tests mirror them, and parts are held, not inherited (no class
chain longer than three). Read from the source's AST, so type-only imports (`if TYPE_CHECKING:`) count:
a circle a type checker must untie is still a circle a reader must.
"""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

PACKAGE = Path(__file__).parent.parent / "custom_components" / "memory"
ROOT = "custom_components.memory"
MAX_LINES = 600
MAX_ENGINE_LINES = 500


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((ROOT, *parts))


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Return the package's modules that `name` imports, at any depth of its AST."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(_tree(path)):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        found.update(target for target in targets if target in known)
    found.discard(name)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(name, path, known) for name, path in modules.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return circles


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_the_circle_finder_finds_a_circle() -> None:
    """Guard the guard: a planted circle is reported, a chain is not."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle() -> None:
    """Each module can be read knowing only the ones below it."""
    assert _circles(_graph()) == []


def test_home_assistant_modules_stay_small() -> None:
    """One responsibility a module keeps each under the budget."""
    too_long = {
        name: _lines(path)
        for name, path in _modules().items()
        if ".engine" not in name and _lines(path) > MAX_LINES
    }
    assert too_long == {}


def test_engine_modules_stay_small() -> None:
    """The engine's budget is tighter: its modules are read as a library."""
    too_long = {
        name: _lines(path)
        for name, path in _modules().items()
        if ".engine" in name and _lines(path) > MAX_ENGINE_LINES
    }
    assert too_long == {}


def test_every_module_says_what_it_holds() -> None:
    """A docstring opens each module."""
    missing = [
        name
        for name, path in _modules().items()
        if ast.get_docstring(_tree(path)) is None
    ]
    assert missing == []


def test_the_engine_imports_nothing_from_home_assistant() -> None:
    """The engine is a library the integration drives, testable without HA."""
    offenders: dict[str, list[str]] = {}
    for name, path in _modules().items():
        if ".engine" not in name:
            continue
        for node in ast.walk(_tree(path)):
            modules: list[str] = []
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                modules = [node.module or ""]
            bad = [m for m in modules if m.split(".")[0] == "homeassistant"]
            if bad:
                offenders.setdefault(name, []).extend(bad)
    assert offenders == {}


# -- the engine's rooms ------------------------------------------------------

ENGINE = f"{ROOT}.engine"
TESTS = Path(__file__).parent / "engine"


def _rooms() -> set[str]:
    """Name the engine's rooms: its packages, each with a public face."""
    return {path.parent.name for path in (PACKAGE / "engine").glob("*/__init__.py")}


def _from_modules(name: str, tree: ast.Module, *, is_package: bool) -> list[str]:
    """List the absolute modules a module's import statements name (not their names)."""
    package = name if is_package else name.rpartition(".")[0]
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.append(base)
    return found


def _room_of(module: str, rooms: set[str]) -> str | None:
    parts = module.removeprefix(f"{ENGINE}.").split(".")
    if not module.startswith(f"{ENGINE}.") or parts[0] not in rooms:
        return None
    return parts[0]


def _reach_ins(
    name: str, tree: ast.Module, *, is_package: bool, rooms: set[str]
) -> list[str]:
    """Modules of another room that `name` imports past that room's face."""
    own = _room_of(name, rooms)
    return [
        target
        for target in _from_modules(name, tree, is_package=is_package)
        if (room := _room_of(target, rooms)) is not None
        and room != own
        and target != f"{ENGINE}.{room}"
    ]


def test_the_reach_in_finder_finds_a_reach_in() -> None:
    """Guard the guard: a room's module named past its face is found; the face is not."""
    rooms = {"store", "search"}
    source = ast.parse(
        "from ..store.database import Database\n"
        "from ..store import MemoryTable\n"
        "from .fusion import fuse\n"
        "import custom_components.memory.engine.store.rows\n"
    )
    name = f"{ENGINE}.search.memories"
    assert _reach_ins(name, source, is_package=False, rooms=rooms) == [
        f"{ENGINE}.store.database",
        f"{ENGINE}.store.rows",
    ]
    home_assistant_side = ast.parse(
        "from .engine.search.fusion import fuse\nfrom .engine.search import fuse\n"
    )
    assert _reach_ins(
        f"{ROOT}.recall", home_assistant_side, is_package=False, rooms=rooms
    ) == [f"{ENGINE}.search.fusion"]


def test_rooms_meet_through_their_faces() -> None:
    """No room, and nothing of the Home Assistant side, imports another room's modules.

    What a room offers the others is what its `__init__` gathers; the rest is
    its own to change.
    """
    rooms = _rooms()
    assert {
        "store",
        "search",
        "languages",
        "embedding",
        "conversations",
        "digestion",
    } <= rooms
    offenders = {
        name: found
        for name, path in _modules().items()
        if (
            found := _reach_ins(
                name, _tree(path), is_package=path.name == "__init__.py", rooms=rooms
            )
        )
    }
    assert offenders == {}


def test_each_face_only_gathers() -> None:
    """A room's `__init__` is its docstring, imports of its own modules, and `__all__`."""
    for room in _rooms():
        path = PACKAGE / "engine" / room / "__init__.py"
        tree = _tree(path)
        body = tree.body[1:] if ast.get_docstring(tree) else tree.body
        names: set[str] = set()
        exported: set[str] = set()
        for node in body:
            if isinstance(node, ast.ImportFrom):
                assert node.level == 1, (room, ast.unparse(node))
                names.update(alias.asname or alias.name for alias in node.names)
            else:
                assert isinstance(node, ast.Assign), (room, ast.unparse(node))
                assert [ast.unparse(t) for t in node.targets] == ["__all__"], room
                exported = set(ast.literal_eval(node.value))
        assert exported == names, room


def test_the_tests_mirror_the_rooms() -> None:
    """`tests/engine/<room>/` for every room, and no folder for a room that is gone."""
    folders = {
        path.name
        for path in TESTS.iterdir()
        if path.is_dir() and (path / "__init__.py").exists()
    }
    assert folders == _rooms()


# -- composition over inheritance ----------------------------------------------

# Base, an intermediate (the HTTP providers' base), the concrete class: the
# engine's parts hold what they use (issue #24) instead of inheriting it.
MAX_CHAIN = 3
# Classes of these kinds are vocabulary, not parts: their chains do not count.
_ASIDE_BASES = frozenset(
    {
        "Enum",
        "Flag",
        "IntEnum",
        "IntFlag",
        "NamedTuple",
        "Protocol",
        "StrEnum",
        "TypedDict",
    }
)


def _base_name(node: ast.expr) -> str:
    """Name a base class as written: `Generic[T]` is `Generic`, `a.B` is `B`."""
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _is_dataclass(node: ast.ClassDef) -> bool:
    return any(
        _base_name(decorator.func if isinstance(decorator, ast.Call) else decorator)
        == "dataclass"
        for decorator in node.decorator_list
    )


def _is_builtin_exception(name: str) -> bool:
    found = getattr(builtins, name, None)
    return isinstance(found, type) and issubclass(found, BaseException)


def _chain_lengths(sources: dict[str, ast.Module]) -> dict[str, int]:
    """Each class's longest inheritance chain through classes of `sources`.

    Dataclasses, NamedTuples, enums, Protocols and exceptions are set aside,
    and so is whatever inherits from one.
    """
    classes: dict[str, tuple[list[str], bool]] = {}
    for module, tree in sources.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                classes[f"{module}.{node.name}"] = (
                    [_base_name(base) for base in node.bases],
                    _is_dataclass(node),
                )
    by_name: dict[str, list[str]] = {}
    for qualified in classes:
        by_name.setdefault(qualified.rpartition(".")[2], []).append(qualified)

    def parents(qualified: str) -> list[str]:
        return [
            parent
            for base in classes[qualified][0]
            for parent in by_name.get(base, [])
            if parent != qualified
        ]

    def aside(qualified: str) -> bool:
        bases, dataclass = classes[qualified]
        return (
            dataclass
            or any(b in _ASIDE_BASES or _is_builtin_exception(b) for b in bases)
            or any(aside(parent) for parent in parents(qualified))
        )

    def length(qualified: str) -> int:
        return 1 + max(map(length, parents(qualified)), default=0)

    return {name: length(name) for name in classes if not aside(name)}


def test_the_chain_finder_finds_a_long_chain() -> None:
    """Guard the guard: four classes deep is found; vocabulary and three are not."""
    planted = ast.parse(
        "class Database: ...\n"
        "class MemoryVectors(Database): ...\n"
        "class MemoryTable(MemoryVectors): ...\n"
        "class MemoryStore(MemoryTable): ...\n"
        "class Provider(abc.ABC): ...\n"
        "class HttpProvider(Provider): ...\n"
        "class OllamaProvider(HttpProvider): ...\n"
        "class StoreError(Exception): ...\n"
        "class InputError(StoreError): ...\n"
        "class LimitError(InputError): ...\n"
        "class TooLongError(LimitError): ...\n"
        "class Kind(StrEnum): ...\n"
        "class Reader(Protocol): ...\n"
        "class Part(Reader): ...\n"
        "@dataclass(frozen=True)\nclass Item: ...\n"
        "class Note(Item): ...\n"
    )
    lengths = _chain_lengths({"engine.planted": planted})
    assert {name: n for name, n in lengths.items() if n > MAX_CHAIN} == {
        "engine.planted.MemoryStore": 4
    }
    assert lengths["engine.planted.OllamaProvider"] == MAX_CHAIN
    assert "engine.planted.TooLongError" not in lengths
    assert "engine.planted.Part" not in lengths
    assert "engine.planted.Note" not in lengths


def test_engine_parts_are_held_not_inherited() -> None:
    """No engine class inherits more than base, intermediate, concrete."""
    sources = {
        name: _tree(path)
        for name, path in _modules().items()
        if name.startswith(ENGINE)
    }
    lengths = _chain_lengths(sources)
    assert any(name.endswith(".MemoryStore") for name in lengths)
    assert {name: n for name, n in lengths.items() if n > MAX_CHAIN} == {}
