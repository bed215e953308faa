"""The CI examples in cli/examples/ parse, and every `a2a-registry` command they run exists."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import yaml
from a2a_registry_cli.main import cli

from tests.cli.conftest import CLI_SOURCE

EXAMPLES = CLI_SOURCE.parent / "examples"


def commands_in(document: Any) -> list[str]:
    """Every shell line of the document that runs a2a-registry."""
    found: list[str] = []
    if isinstance(document, dict):
        for value in document.values():
            found += commands_in(value)
    elif isinstance(document, list):
        for value in document:
            found += commands_in(value)
    elif isinstance(document, str):
        found += [m.group(0) for m in re.finditer(r"a2a-registry [^\n;]+", document)]
    return found


def check_commands(lines: list[str]) -> set[str]:
    names = set()
    for line in lines:
        words = shlex.split(line)
        assert words[0] == "a2a-registry"
        command = cli.commands.get(words[1])
        assert command is not None, f"{words[1]} is no command of the CLI ({line})"
        options = {opt for param in command.params for opt in getattr(param, "opts", [])}
        for word in words[2:]:
            if word.startswith("--"):
                assert word.split("=")[0] in options, f"{word} is no option of {words[1]}"
        names.add(words[1])
    return names


def test_the_github_actions_workflow() -> None:
    workflow = yaml.safe_load((EXAMPLES / "github-actions.yml").read_text())
    assert workflow["permissions"]["id-token"] == "write"
    steps = workflow["jobs"]["card"]["steps"]
    installs = [s["run"] for s in steps if "pip install" in s.get("run", "")]
    assert installs and "subdirectory=cli" in installs[0]
    names = check_commands(commands_in(steps))
    assert names == {"validate", "login", "publish"}


def test_the_gitlab_ci_job() -> None:
    pipeline = yaml.safe_load((EXAMPLES / "gitlab-ci.yml").read_text())
    job = pipeline["agent-card"]
    assert job["id_tokens"] == {"A2A_REGISTRY_ID_TOKEN": {"aud": "a2a-registry"}}
    assert "subdirectory=cli" in job["before_script"][0]
    assert check_commands(commands_in(job["script"])) == {"validate", "login", "publish"}


def test_the_examples_are_in_the_docs() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "publishing-from-ci.md").read_text()
    assert "cli/examples/github-actions.yml" in docs and "cli/examples/gitlab-ci.yml" in docs
