"""The README's Python examples run as written, from the repository root, and print what the
README says they print."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
PRINTED = [
    "True\n['add_generation_prompt', 'messages', 'tools']\n",
    "A! B! \nHello World!\n",
    "[user] Hi\n['[user] Hi', '[user] Hi[user] Hi']\n42\n",
]


def test_every_example_has_its_expected_output():
    assert len(BLOCKS) == len(PRINTED)


@pytest.mark.parametrize(("block", "printed"), list(zip(BLOCKS, PRINTED, strict=True)))
def test_readme_example_runs(block, printed, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    exec(compile(block, "README.md", "exec"), {})
    assert capsys.readouterr().out == printed
