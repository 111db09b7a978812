"""ChatTemplate.capabilities(): what probe renders find, and the `check` command's verdict."""

from __future__ import annotations

from minijinja_py.chat import ChatTemplate
from minijinja_py.cli import main

# The shape of Llama 2's template: special tokens joined with '+', which fails when undefined.
LLAMA2 = (
    "{% if messages[0]['role'] == 'system' %}"
    "{% set sys = '<<SYS>>\\n' + messages[0]['content'] + '\\n<</SYS>>\\n\\n' %}"
    "{% set msgs = messages[1:] %}{% else %}{% set sys = '' %}{% set msgs = messages %}{% endif %}"
    "{% for m in msgs %}{% if m['role'] == 'user' %}"
    "{{ bos_token + '[INST] ' + (sys if loop.first else '') + m['content'] + ' [/INST]' }}"
    "{% else %}{{ ' ' + m['content'] + ' ' + eos_token }}{% endif %}{% endfor %}"
)


def test_typed_content_only_when_the_parts_are_read():
    printed = ChatTemplate("{% for m in messages %}{{ m.content }}{% endfor %}").capabilities()
    assert (printed.supports_typed_content, printed.requires_typed_content) == (False, False)
    as_json = ChatTemplate("{% for m in messages %}{{ m.content|tojson }}{% endfor %}")
    assert as_json.capabilities().supports_typed_content is False
    reads = ChatTemplate(
        "{% for m in messages %}{% if m.content is string %}{{ m.content }}"
        "{% else %}{% for p in m.content %}{{ p.text }}{% endfor %}{% endif %}{% endfor %}"
    )
    assert reads.capabilities().supports_typed_content is True


def test_probes_use_stand_ins_for_missing_special_tokens():
    bare = ChatTemplate(LLAMA2).capabilities()
    assert (bare.supports_system_role, bare.renders) == (True, True)
    with_tokens = ChatTemplate(LLAMA2, {"bos_token": "<s>", "eos_token": "</s>"}).capabilities()
    assert with_tokens.supports_system_role is True


def test_a_template_that_always_raises_does_not_render():
    caps = ChatTemplate("{{ raise_exception('not for this model') }}").capabilities()
    assert (caps.renders, caps.render_error) == (False, "not for this model")
    assert ChatTemplate("{{ messages[0].content }}").capabilities().renders is True


def test_check_reports_a_template_that_always_raises(tmp_path, capsys):
    path = tmp_path / "raises.jinja"
    path.write_text("{{ raise_exception('no') }}", encoding="utf-8")
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"fails to render: {path}\n")
    assert "  renders: no\n  render_error: no\n" in out


def test_check_on_a_bare_llama2_file_sees_its_system_role(tmp_path, capsys):
    path = tmp_path / "llama-2.jinja"
    path.write_text(LLAMA2, encoding="utf-8")
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"ok: {path}\n")
    assert "  supports_system_role: yes\n" in out
