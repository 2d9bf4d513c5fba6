"""HTML fragments the report builds outside the template: a perturbed text with its edits marked, and
the pipe tables of the stages' Markdown files. Every piece of input text is HTML-escaped here."""
from __future__ import annotations

import difflib
import re
from html import escape

from markupsafe import Markup


def _mark(tag: str, text: str) -> str:
    kind = " class=\"nl\"" if "\n" in text else " class=\"ws\"" if text.isspace() else ""
    return f"<{tag}{kind}>{escape(text, quote=False)}</{tag}>"


def mark_edits(clean: str, perturbed: str) -> Markup:
    """`perturbed` against `clean`, character by character (difflib.SequenceMatcher, no junk heuristic):
    inserted characters in <ins>, deleted ones in <del>. Dropping the <del> elements and the tags leaves
    the perturbed text; dropping the <ins> elements and the tags leaves the clean text."""
    out = []
    matcher = difflib.SequenceMatcher(None, clean, perturbed, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            out.append(escape(clean[i1:i2], quote=False))
            continue
        if i2 > i1:
            out.append(_mark("del", clean[i1:i2]))
        if j2 > j1:
            out.append(_mark("ins", perturbed[j1:j2]))
    return Markup("".join(out))


_PIPE = re.compile(r"(?<!\\)\|")     # a cell border; `\|` is a pipe inside a cell
_INLINE = ((re.compile(r"\*\*(.+?)\*\*"), r"<strong>\1</strong>"), (re.compile(r"&lt;u&gt;(.+?)&lt;/u&gt;"), r"<u>\1</u>"),
           (re.compile(r"`(.+?)`"), r"<code>\1</code>"))


def _inline(text: str) -> str:
    text = escape(text.strip(), quote=False)
    for pattern, repl in _INLINE:
        text = pattern.sub(repl, text)
    return text


def markdown_tables(text: str) -> Markup:
    """The stages' Markdown (paragraphs and pipe tables, `**bold**`, `<u>…</u>`, `code`) as HTML;
    anything else stays text."""
    html, table, para = [], [], []

    def flush() -> None:
        if para:
            html.append(f"<p>{_inline(' '.join(para))}</p>")
            para.clear()
        if table:
            rows = [[c.replace("\\|", "|") for c in _PIPE.split(line.strip().strip("|"))] for line in table]
            body = [r for r in rows[1:] if not all(set(c.strip()) <= set(":-") for c in r)]
            head = "".join(f"<th>{_inline(c)}</th>" for c in rows[0])
            cells = "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>" for r in body)
            html.append(f"<table><thead><tr>{head}</tr></thead><tbody>{cells}</tbody></table>")
            table.clear()

    for line in text.splitlines():
        if line.lstrip().startswith("|"):
            if para:
                flush()
            table.append(line)
        elif line.strip():
            if table:
                flush()
            para.append(line)
        else:
            flush()
    flush()
    return Markup("\n".join(html))
