"""`minijinja-py check`: a template's syntax, variables and capabilities, within limits."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from .options import _load_chat, _write_stdout

# -- check --------------------------------------------------------------------------------------


def _cmd_check(args: argparse.Namespace) -> int:
    from .. import TemplateSyntaxError

    path = args.file
    try:
        if os.path.isdir(path):
            args.template, args.model, args.gguf = None, path, None
        elif path.lower().endswith(".gguf"):
            args.template, args.model, args.gguf = None, None, path
        else:
            args.template, args.model, args.gguf = path, None, None
        chat = _load_chat(args)
    except Exception as exc:
        if args.json:  # the failure as a report too, so that tools read one format
            from ..pipelines.rows import error_record

            record = error_record(exc)
            if isinstance(exc, FileNotFoundError) and exc.filename is not None:
                record["message"] = f"no such file: {exc.filename}"
            failed = {"file": path, "ok": False, "error": record}
            _write_stdout(json.dumps(failed, indent=2, ensure_ascii=False) + "\n")
            return 1
        if isinstance(exc, TemplateSyntaxError) and exc.name is None:
            exc.name = path
        raise
    report: dict[str, Any] = {"file": path, "ok": True, "templates": {}}
    for name in chat.template_names:
        report["templates"][name] = _capabilities(chat, name)
    # A template that raises on every probe renders nothing, and one stopped by a limit was not
    # checked: neither is "ok".
    report["ok"] = all(caps["renders"] is True for caps in report["templates"].values())
    status = 0 if report["ok"] else 1
    if args.json:
        _write_stdout(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        return status
    verdicts = {caps["renders"] for caps in report["templates"].values()}
    verdict = (
        "ok" if report["ok"] else "fails to render" if False in verdicts else "stopped by a limit"
    )
    lines = [f"{verdict}: {path}"]
    for name, caps in report["templates"].items():
        prefix = "" if len(report["templates"]) == 1 else f"[{name}] "
        variables = ", ".join(caps.pop("variables")) or "(none)"
        lines.append(f"{prefix}variables: {variables}")
        lines.append(f"{prefix}capabilities:")
        known = caps["renders"] is True
        for key, value in caps.items():
            if not known and key not in _KNOWN_ANYWAY or key == "renders" and value is None:
                shown = "unknown"
            elif isinstance(value, bool):
                shown = "yes" if value else "no"
            else:
                shown = str(value)
            lines.append(f"  {key}: {shown}")
    _write_stdout("\n".join(lines) + "\n")
    return status


# What the probe renders establish; the rest (the variables, the error) is known regardless.
_KNOWN_ANYWAY = frozenset({"variables", "renders", "render_error"})


class _BoundedProbes:
    """A compiled template whose renders stop at the first limit one of them meets: a template
    that runs every probe to the limit would take the limit's time once per probe (a check of
    20-odd probes, 4 s on a hostile template)."""

    def __init__(self, compiled: Any) -> None:
        self.compiled = compiled
        self.stopped: BaseException | None = None

    def undeclared_variables(self) -> Any:
        return self.compiled.undeclared_variables()

    def _run(self, method: str, context: Any) -> Any:
        from ..errors import LimitError

        if self.stopped is not None:
            raise LimitError(self.stopped.message)  # type: ignore[attr-defined]
        try:
            return getattr(self.compiled, method)(context)
        except LimitError as error:
            self.stopped = error
            raise

    def render(self, context: Any) -> Any:
        return self._run("render", context)

    def render_with_spans(self, context: Any) -> Any:
        return self._run("render_with_spans", context)


def _capabilities(chat: Any, name: str) -> dict[str, Any]:
    """The capabilities of `chat`'s template `name`, each `None` (unknown) that the probes could
    not establish: all of them when every probe failed or one met a limit."""
    from ..chat.capabilities import probe_capabilities
    from ..environment import chat_environment

    source = chat.sources[name]
    probes = _BoundedProbes(chat_environment(chat.limits).from_string(source))
    caps = probe_capabilities(probes, chat.special_tokens).as_dict()
    if probes.stopped is not None:
        caps["renders"] = None
        caps["render_error"] = probes.stopped.message  # type: ignore[attr-defined]
    if caps["renders"] is not True:
        caps.update({key: None for key in caps if key not in _KNOWN_ANYWAY})
    return caps
