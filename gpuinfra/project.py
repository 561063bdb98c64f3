"""Reads a Pulumi project the way the Pulumi CLI would: Pulumi.yaml and Pulumi.<stack>.yaml."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

SECRET_PLACEHOLDER = "[secret: not decrypted by the offline preview]"


class ProjectError(Exception):
    """The project or stack files are missing or malformed."""


@dataclass(frozen=True)
class Project:
    root: Path
    name: str
    config_schema: dict[str, Any]

    def stack_file(self, stack: str) -> Path:
        return self.root / f"Pulumi.{stack}.yaml"

    def stacks(self) -> list[str]:
        prefix, suffix = "Pulumi.", ".yaml"
        return sorted(p.name[len(prefix) : -len(suffix)] for p in self.root.glob("Pulumi.*.yaml"))


def load_project(root: Path) -> Project:
    path = root / "Pulumi.yaml"
    if not path.is_file():
        raise ProjectError(f"no Pulumi.yaml in {root} (use --cwd to point at the project)")
    data = _read_yaml(path)
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ProjectError(f"{path}: `name` is missing; expected the project's name (text)")
    schema = data.get("config") or {}
    if not isinstance(schema, dict):
        raise ProjectError(f"{path}: `config` is a {type(schema).__name__}; expected a mapping")
    return Project(root=root, name=name, config_schema=dict(schema))


def _read_yaml(path: Path) -> dict[str, Any]:
    """The file's mapping; every way it can fail is a one-line `ProjectError` naming it."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except UnicodeDecodeError as error:
        raise ProjectError(f"{path}: not text ({error.reason}); expected YAML") from error
    except OSError as error:
        raise ProjectError(f"{path}: cannot be read ({error.strerror or error})") from error
    except yaml.YAMLError as error:
        raise ProjectError(f"{path} is not valid YAML: {_yaml_problem(error)}") from error
    if not isinstance(data, dict):
        raise ProjectError(f"{path} holds a {type(data).__name__}; expected a mapping")
    return data


def _yaml_problem(error: yaml.YAMLError) -> str:
    """PyYAML's message spans several lines (context, snippet): keep the problem and where."""
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return " ".join(f"{where}{problem}".split())


@dataclass(frozen=True)
class StackConfig:
    values: dict[str, str]
    """Qualified key -> value as the engine hands it to the program (text; JSON for lists)."""
    secret_keys: list[str]


def load_stack_config(project: Project, stack: str) -> StackConfig:
    path = project.stack_file(stack)
    if not path.is_file():
        known = ", ".join(project.stacks()) or "none"
        raise ProjectError(f"no stack '{stack}': {path.name} not found (stacks here: {known})")
    config = _read_yaml(path).get("config") or {}
    if not isinstance(config, dict):
        raise ProjectError(f"{path}: `config` is a {type(config).__name__}; expected a mapping")
    values: dict[str, str] = {}
    secret_keys: list[str] = []
    for key, value in config.items():
        if not isinstance(key, str):
            raise ProjectError(f"{path}: config key {key!r}; expected text such as gpuinfra:cloud")
        qualified = key if ":" in key else f"{project.name}:{key}"
        if isinstance(value, dict) and set(value) == {"secure"}:
            values[qualified] = SECRET_PLACEHOLDER
            secret_keys.append(qualified)
        else:
            values[qualified] = engine_text(value)
    return StackConfig(values=values, secret_keys=secret_keys)


def engine_text(value: Any) -> str:
    """How the Pulumi CLI passes a YAML config value to a Python program."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return "" if value is None else str(value)
