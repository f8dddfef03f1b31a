"""Home Assistant's own checks of the integration's files, run with the tests.

hassfest (core's `script/hassfest`) is not in the `homeassistant` wheel, so
this applies the validators the wheel does ship, the way hassfest applies them
to a custom integration: `cv.string_with_no_html` (and hassfest's other string
rules) on every translation, the services.yaml schema Home Assistant loads it
with plus `selector.validate_selector`, icons, the manifest keys a custom
integration needs, and that services.yaml, icons.json, en.json and the
translation keys the code uses agree with each other.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
import json
from pathlib import Path
import re
from typing import Any, get_type_hints

from awesomeversion import AwesomeVersion, AwesomeVersionStrategy
from homeassistant import loader
from homeassistant.core import HomeAssistant
from homeassistant.helpers import (
    config_validation as cv,
    selector,
    service as service_helper,
)
from homeassistant.util.yaml import load_yaml_dict
from PIL import Image
import probatio
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.memory.const import DOMAIN
from custom_components.memory.engine import errors as engine_errors
from custom_components.memory.provider_forms import FLOW_ERRORS

INTEGRATION = Path(__file__).parents[1] / "custom_components" / DOMAIN
EN = INTEGRATION / "translations" / "en.json"

# hassfest's rules for translation keys and values (script/hassfest/translations.py).
RE_TRANSLATION_KEY = re.compile(r"^(?!.+[_-]{2})(?![_-])[a-z0-9-_]+(?<![_-])$")
RE_COMBINED_REFERENCE = re.compile(r"(.+)\[%key:(.+)%\](.+)")
RE_SINGLE_QUOTED_PLACEHOLDER = re.compile(r"'{\w+}'")
# Keys a field of services.yaml may have in a custom integration.
SERVICE_FIELD_KEYS = {
    "advanced",
    "default",
    "description",
    "example",
    "filter",
    "name",
    "required",
    "selector",
}
# Sections of en.json whose keys are translation keys (not field names).
KEYED_SECTIONS = ("entity", "exceptions", "issues", "selector", "services")


def _en() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(EN.read_text(encoding="utf-8"))
    return data


def _services_yaml() -> dict[str, Any]:
    return load_yaml_dict(str(INTEGRATION / "services.yaml"))


def _icons() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (INTEGRATION / "icons.json").read_text(encoding="utf-8")
    )
    return data


def _leaves(node: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, f"{path}.{key}" if path else key)
    else:
        yield path, node


def _keys(node: Any, path: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield path, key
            yield from _keys(value, f"{path}.{key}" if path else key)


def translation_value(value: Any) -> str:
    """Validate one translated string as hassfest does."""
    text = cv.string_with_no_html(value)
    if RE_SINGLE_QUOTED_PLACEHOLDER.search(text):
        raise probatio.Invalid("placeholder wrapped in single quotes")
    if RE_COMBINED_REFERENCE.search(text):
        raise probatio.Invalid("combined translation reference")
    if text != text.strip():
        raise probatio.Invalid("leading or trailing spaces")
    return text


def translation_problems(strings: dict[str, Any]) -> list[str]:
    """Every string and translation key of en.json that hassfest would refuse."""
    problems = []
    for path, value in _leaves(strings):
        try:
            translation_value(value)
        except probatio.Invalid as err:
            problems.append(f"{path}: {err}")
    for section in KEYED_SECTIONS:
        for path, key in _keys(strings.get(section, {}), section):
            if path.endswith((".options", ".state", ".state_attributes")):
                continue  # selector options and states are values, not keys
            if not RE_TRANSLATION_KEY.match(key):
                problems.append(f"{path}.{key}: not a valid translation key")
    return problems


def test_translations_pass_home_assistants_validators() -> None:
    """No HTML, no quoted placeholders, no padding, valid keys."""
    assert translation_problems(_en()) == []


def test_translation_validator_refuses_html() -> None:
    """The check above would catch a `<config>` again (it did, in export)."""
    bad = {"services": {"export": {"description": "Writes under <config>/memory"}}}
    assert translation_problems(bad) == [
        "services.export.description: the string should not contain HTML"
    ]


def test_services_yaml_loads_with_home_assistants_schema() -> None:
    """The schema Home Assistant applies at load, and every selector valid."""
    services = service_helper._SERVICES_SCHEMA(_services_yaml())
    for name, service in services.items():
        for field_name, field in service.get("fields", {}).items():
            extra = set(field) - SERVICE_FIELD_KEYS
            assert not extra, f"{name}.{field_name}: unknown keys {extra}"
            assert "selector" in field, f"{name}.{field_name}: no selector"
            selector.validate_selector(field["selector"])


def test_services_and_their_translations_agree() -> None:
    """Each action and field has a name and description, and nothing extra."""
    services = _services_yaml()
    translations = _en()["services"]
    assert set(translations) == set(services)
    for name, service in services.items():
        text = translations[name]
        assert text["name"], name
        assert text["description"], name
        fields = set(service.get("fields", {}))
        assert set(text.get("fields", {})) == fields, name
        for field in fields:
            assert set(text["fields"][field]) == {"name", "description"}, field


def test_selector_options_are_translated() -> None:
    """A select with a translation_key has a label for each option, no more."""
    wanted: dict[str, set[str]] = {}
    for service in _services_yaml().values():
        for field in service.get("fields", {}).values():
            select = field["selector"].get("select")
            if select and "translation_key" in select:
                options = wanted.setdefault(select["translation_key"], set())
                options.update(select["options"])
    # Selects of the config and options flows (the built-in model's choice).
    from custom_components.memory.provider_forms import LOCAL_MODELS  # noqa: PLC0415
    from custom_components.memory.storage_flow import BACKENDS  # noqa: PLC0415

    wanted["local_model"] = set(LOCAL_MODELS)
    wanted["backend"] = set(BACKENDS)
    translated = _en()["selector"]
    assert set(translated) == set(wanted)
    for key, options in wanted.items():
        assert set(translated[key]["options"]) == options, key


async def test_registered_actions_are_described(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """Every action the integration registers is in services.yaml, and only those."""
    assert set(hass.services.async_services_for_domain(DOMAIN)) == set(_services_yaml())


def test_icons() -> None:
    """Material Design icons, for every action and for entities that exist."""
    icons = _icons()
    assert set(icons) <= {"entity", "services"}
    assert set(icons["services"]) == set(_services_yaml())
    for path, icon in _leaves(icons):
        assert cv.icon(icon).startswith("mdi:"), path
    entity_translations = _en()["entity"]
    for platform, keys in icons["entity"].items():
        assert set(keys) <= set(entity_translations[platform]), platform
        for key, icon in keys.items():
            assert set(icon) <= {"default", "state", "state_attributes", "range"}, key
            assert "default" in icon, key


def test_manifest() -> None:
    """What a custom integration needs to load, and nothing unknown."""
    manifest = json.loads((INTEGRATION / "manifest.json").read_text("utf-8"))
    assert set(manifest) <= set(get_type_hints(loader.Manifest))
    assert manifest["domain"] == DOMAIN == INTEGRATION.name
    assert manifest["name"]
    # Home Assistant refuses a custom integration without a valid version.
    AwesomeVersion(
        manifest["version"],
        ensure_strategy=[
            AwesomeVersionStrategy.CALVER,
            AwesomeVersionStrategy.SEMVER,
            AwesomeVersionStrategy.SIMPLEVER,
            AwesomeVersionStrategy.BUILDVER,
            AwesomeVersionStrategy.PEP440,
        ],
    )
    assert cv.url(manifest["documentation"]).startswith("https://")
    assert cv.url(manifest["issue_tracker"]).startswith("https://")
    assert manifest["codeowners"]
    assert all(re.fullmatch(r"@[\w.-]+(/[\w.-]+)?", o) for o in manifest["codeowners"])
    assert manifest["iot_class"] in {
        "assumed_state",
        "calculated",
        "cloud_polling",
        "cloud_push",
        "local_polling",
        "local_push",
    }
    assert manifest["integration_type"] in {"device", "hub", "service"}
    assert manifest["config_flow"] == (INTEGRATION / "config_flow.py").exists()
    for requirement in manifest["requirements"]:
        assert re.fullmatch(r"[A-Za-z0-9_.-]+==[\w.]+", requirement), requirement


# -- translation keys the code uses -----------------------------------------


class _KeyCollector(ast.NodeVisitor):
    """Translation keys a module of the integration uses, by where they go."""

    def __init__(self, module: str, constants: dict[str, str]) -> None:
        self.platform = module
        self.constants = constants
        self.flow = "config"
        self.used: set[tuple[str, str]] = set()
        # Helpers that pass one of their parameters on as translation_key.
        self.forwarders: dict[str, tuple[int, str, str]] = {}

    def _string(self, node: ast.expr | None) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.constants.get(node.id)
        return None

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        bases = {ast.unparse(base) for base in node.bases}
        if "OptionsFlow" in bases:
            self.flow = "options"
        if bases & {"RepairsFlow", "ConfirmRepairFlow"}:
            # issues.<issue_id>.fix_flow: the issue is chosen at run time.
            self.flow = "fix_flow"
        for statement in node.body:
            if (
                isinstance(statement, ast.Assign)
                and ast.unparse(statement.targets[0]) == "_attr_translation_key"
                and (key := self._string(statement.value))
            ):
                self.used.add((f"entity.{self.platform}", key))
        self.generic_visit(node)
        self.flow = "config"

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        params = [arg.arg for arg in node.args.args]
        for call in ast.walk(node):
            if not isinstance(call, ast.Call):
                continue
            for keyword in call.keywords:
                if (
                    keyword.arg == "translation_key"
                    and isinstance(keyword.value, ast.Name)
                    and keyword.value.id in params
                ):
                    self.forwarders[node.name] = (
                        params.index(keyword.value.id),
                        keyword.value.id,
                        self._section(call),
                    )
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]  # noqa: N815

    def _section(self, call: ast.Call) -> str:
        name = ast.unparse(call.func).rsplit(".", 1)[-1]
        if name == "async_create_issue":
            return "issues"
        if name.endswith("Description"):
            return f"entity.{self.platform}"
        if name == "SelectSelectorConfig":
            return "selector"
        return "exceptions"

    def visit_Call(self, node: ast.Call) -> None:
        name = ast.unparse(node.func).rsplit(".", 1)[-1]
        for keyword in node.keywords:
            value = self._string(keyword.value)
            if value is None:
                continue
            if keyword.arg == "translation_key":
                self.used.add((self._section(node), value))
            elif keyword.arg == "reason" and name == "async_abort":
                self.used.add((f"{self.flow}.abort", value))
            elif keyword.arg == "step_id":
                self.used.add((f"{self.flow}.step", value))
            elif keyword.arg == "progress_action":
                self.used.add((f"{self.flow}.progress", value))
        for keyword in node.keywords:
            # errors={"base": "download_failed"}
            if keyword.arg == "errors" and isinstance(keyword.value, ast.Dict):
                self.used.update(
                    (f"{self.flow}.error", key)
                    for value in keyword.value.values
                    if (key := self._string(value))
                )
        if isinstance(node.func, ast.Name) and node.func.id in self.forwarders:
            index, param, section = self.forwarders[node.func.id]
            args = [*node.args, *(k.value for k in node.keywords if k.arg == param)]
            if len(node.args) > index:
                args = [node.args[index]]
            if args and (key := self._string(args[0])):
                self.used.add((section, key))
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        # errors["base"] = "satellite_needs_person"
        target = node.targets[0]
        if (
            isinstance(target, ast.Subscript)
            and ast.unparse(target.value) == "errors"
            and (key := self._string(node.value))
        ):
            self.used.add((f"{self.flow}.error", key))
        self.generic_visit(node)


def _module_constants(modules: list[Path]) -> dict[str, str]:
    constants: dict[str, str] = {}
    for module in modules:
        for node in ast.parse(module.read_text("utf-8")).body:
            target: ast.expr | None = None
            value: ast.expr | None = None
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                target, value = node.target, node.value
            if (
                isinstance(target, ast.Name)
                and isinstance(value, ast.Constant)
                and isinstance(value.value, str)
            ):
                constants[target.id] = value.value
    return constants


def used_translation_keys() -> set[tuple[str, str]]:
    """(section of en.json, key) for every translation key the code names."""
    modules = sorted(INTEGRATION.glob("*.py"))
    constants = _module_constants(modules)
    used: set[tuple[str, str]] = set()
    for module in modules:
        collector = _KeyCollector(module.stem, constants)
        tree = ast.parse(module.read_text("utf-8"))
        # Forwarding helpers first, so calls before their definition count.
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                collector.visit_FunctionDef(node)  # type: ignore[arg-type]
        collector.used.clear()
        collector.visit(tree)
        used |= collector.used
    # Engine errors reach users with their own key (services, set-up).
    used |= {
        ("exceptions", error.key)
        for error in _subclasses(engine_errors.StoreError)
        if error is not engine_errors.StoreError
    }
    used |= {("config.error", key) for key in FLOW_ERRORS}
    return used


def _subclasses(
    cls: type[engine_errors.StoreError],
) -> Iterator[type[engine_errors.StoreError]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def _at(node: Any, path: str) -> Any:
    """Return the part of en.json at a dotted path, or {}."""
    for part in path.split("."):
        node = node.get(part, {}) if isinstance(node, dict) else {}
    return node


def _has(strings: dict[str, Any], section: str, key: str) -> bool:
    if section.startswith("fix_flow."):
        # A repair's fix flow: under the fix_flow of an issue that has one.
        return any(
            key in _at(issue, section)
            for issue in strings.get("issues", {}).values()
            if isinstance(issue, dict) and "fix_flow" in issue
        )
    node = _at(strings, section)
    return isinstance(node, dict) and key in node


def test_translation_keys_used_in_code_exist() -> None:
    """Exceptions, issues, entity names, flow steps, errors and aborts."""
    used = used_translation_keys()
    # The collector itself finds each kind (so an empty scan cannot pass).
    sections = {section.split(".")[0] for section, _ in used}
    assert sections >= {"config", "options", "entity", "exceptions", "issues"}
    assert ("exceptions", "not_loaded") in used
    assert ("fix_flow.step", "confirm") in used  # repairs.py
    strings = _en()
    missing = sorted(
        f"{section}.{key}" for section, key in used if not _has(strings, section, key)
    )
    assert missing == []


@pytest.mark.parametrize("platform", ["sensor", "binary_sensor"])
def test_entity_translations_are_used(platform: str) -> None:
    """No entity name is left over from an entity that no longer exists."""
    used = {
        key
        for section, key in used_translation_keys()
        if section == f"entity.{platform}"
    }
    assert set(_en()["entity"][platform]) == used


# -- what HACS and the brand images need ------------------------------------


def test_license() -> None:
    """HACS refuses a repository without a license."""
    text = (INTEGRATION.parents[1] / "LICENSE").read_text("utf-8")
    assert text.startswith("MIT License")


@pytest.mark.parametrize(
    ("name", "height"),
    [
        ("icon.png", 256),
        ("icon@2x.png", 512),
        ("logo.png", 128),
        ("logo@2x.png", 256),
        ("dark_logo.png", 128),
        ("dark_logo@2x.png", 256),
    ],
)
def test_brand_images(name: str, height: int) -> None:
    """The sizes the brands repository asks for, on a transparent background."""
    with Image.open(INTEGRATION / "brand" / name) as image:
        assert image.format == "PNG"
        assert image.mode == "RGBA"
        assert image.height == height
        if name.startswith("icon"):
            assert image.width == height
        else:
            assert image.width >= height  # the shortest side is the height
        assert image.getpixel((image.width - 1, image.height - 1)) == (0, 0, 0, 0)
        # Trimmed: the drawing reaches the left and right edges.
        box = image.getbbox(alpha_only=True)
        assert box is not None
        assert (box[0], box[2]) == (0, image.width)


# -- quality_scale.yaml claims what is true ----------------------------------

# A "done" documentation rule needs its section in the README.
README_SECTIONS = {
    "docs-removal-instructions": "## Removal",
    "docs-known-limitations": "## Known limitations",
    "docs-troubleshooting": "## Troubleshooting",
    "docs-actions": "## Actions",
    "docs-installation-instructions": "## Installation",
}


def test_quality_scale() -> None:
    """Valid statuses, a reason for every exemption, and done means done."""
    rules = load_yaml_dict(str(INTEGRATION / "quality_scale.yaml"))["rules"]
    readme = (INTEGRATION.parents[1] / "README.md").read_text("utf-8")
    headings = {line.strip() for line in readme.splitlines()}
    for name, rule in rules.items():
        status = rule if isinstance(rule, str) else rule["status"]
        assert status in {"done", "todo", "exempt"}, name
        if status == "exempt":
            assert rule["comment"].strip(), f"{name}: exempt without a reason"
        if status == "done" and name in README_SECTIONS:
            assert README_SECTIONS[name] in headings, f"{name}: no section"
    # Dependency transparency names every requirement the manifest pins.
    manifest = json.loads((INTEGRATION / "manifest.json").read_text("utf-8"))
    named = rules["dependency-transparency"]["comment"]
    for requirement in manifest["requirements"]:
        assert requirement.split("==")[0] in named, requirement
    assert rules["brands"]["status"] == "done"
    assert (INTEGRATION / "brand" / "icon.png").exists()
