"""Pulumi.yaml and the README reference stay in step with the settings schema; the project
files are what the Pulumi CLI accepts."""

from __future__ import annotations

from pathlib import Path

import yaml

from components.settings.schema import KEYS
from gpuinfra.schema_docs import config_block, render_pulumi_yaml, render_readme

ROOT = Path(__file__).resolve().parent.parent
# What a Pulumi project config schema allows (sdk/go/common/workspace/project.json).
PULUMI_TYPES = {"string", "integer", "boolean", "array"}


def test_pulumi_yaml_config_matches_the_schema() -> None:
    text = (ROOT / "Pulumi.yaml").read_text()
    assert text == render_pulumi_yaml(text), "run `gpuinfra schema --write`"
    project = yaml.safe_load(text)
    assert project["name"] == "gpuinfra"
    assert project["runtime"]["name"] == "python"
    assert project["config"] == config_block()


def test_every_key_has_type_description_and_default() -> None:
    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
    assert len(project["config"]) == len([k for k in KEYS if k.type in PULUMI_TYPES])
    for key, entry in project["config"].items():
        assert key.startswith("gpuinfra:")
        assert entry["type"] in PULUMI_TYPES, key
        assert entry["description"].strip(), key
        assert "default" in entry, key
        if entry["type"] == "array":
            assert entry["items"] == {"type": "string"}, key


def test_readme_reference_matches_the_schema() -> None:
    text = (ROOT / "README.md").read_text()
    assert text == render_readme(text), "run `gpuinfra schema --write`"
    for key in KEYS:
        assert f"`{key.qualified}`" in text


def test_schema_check_command_fails_on_drift(tmp_path: Path) -> None:
    from gpuinfra.schema_docs import check_or_write

    for name in ("Pulumi.yaml", "README.md"):
        (tmp_path / name).write_text((ROOT / name).read_text())
    assert check_or_write(tmp_path, write=False) == 0
    readme = tmp_path / "README.md"
    readme.write_text(readme.read_text().replace("gpuinfra:vpcCidr", "gpuinfra:vpcRange"))
    assert check_or_write(tmp_path, write=False) == 1
    assert check_or_write(tmp_path, write=True) == 0
    assert check_or_write(tmp_path, write=False) == 0


def test_stack_files_use_only_known_keys() -> None:
    names = {key.qualified for key in KEYS}
    for path in ROOT.glob("Pulumi.*.yaml"):
        config = yaml.safe_load(path.read_text())["config"]
        for key in config:
            assert key in names or not key.startswith("gpuinfra:"), f"{path.name}: {key}"


def test_requirements_pin_major_versions() -> None:
    lines = [
        line.split("#")[0].strip()
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.split("#")[0].strip()
    ]
    wanted = {"pulumi": "<4", "pulumi-aws": "<8", "pulumi-kubernetes": "<5"}
    for package, bound in wanted.items():
        [line] = [
            entry for entry in lines if entry.split(">")[0].split("<")[0].split("=")[0] == package
        ]
        assert bound in line, line


def _first_screen_commands() -> list[str]:
    first_screen = (ROOT / "README.md").read_text().split("\n## ", 1)[0]
    blocks = first_screen.split("```bash\n")[1:]
    return [block.split("```", 1)[0].strip() for block in blocks]


def test_readme_first_screen_has_exactly_two_commands() -> None:
    commands = _first_screen_commands()
    assert len(commands) == 2
    assert all("\n" not in command for command in commands)
    assert commands[0].endswith("gpuinfra preview --stack dev")
    assert commands[1].endswith("python -m pytest")


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert _first_screen_commands()[1] in ci.splitlines()
