"""Code-prompt perturbation families of the code-generation benchmark (TestNav §4.1, benchmark (iii)).

Following ReCode (Wang et al., 2023), TestNav perturbs HumanEval/MBPP prompts (a function signature and
its docstring) with butterfingers, character case, whitespace and newline perturbations, applied
compositionally in that order, with the levels of its footnote 2:

- butterfingers: each letter replaced by a nearby key with probability p ∈ {.05, .10, .15, .20, .25};
- character case: each letter's case flipped with probability p ∈ {.1, .2, .35, .5, .7};
- whitespace: a space added after each non-space character with probability p_add and each whitespace
  character deleted with probability p_del, (p_add, p_del) ∈ {(.1,.05), (.15,.07), (.2,.1), (.25,.12),
  (.3,.15)};
- newline insertion: n ∈ {1, 2, 3, 4, 5} blank lines added.

Each family is a pure function `family(prompt, level, seed) -> str`; level 0 returns the prompt itself.

Where (as ReCode): the first three are natural-language perturbations of the docstring. They edit only
the *docstring text* of the prompt: the content of its last bare string-literal statement (the entry
point's docstring; HumanEval prompts end with it, and HumanEval/115 puts an `import` before it, so it is
found as a statement, not through `ast.get_docstring`), from its first to its last non-whitespace
character, and stopping before the first line that starts with `>>>` (ReCode keeps the doctest examples
intact). Inside that text, butterfingers and character case leave alone the words that name an
identifier of the prompt's code (function, parameter, type and module names; ReCode's "black list",
which also draws on the canonical solution this function does not see), and no family touches an escape
sequence (`\\n`, `\\x41`, …) or deletes whitespace next to a quote or a backslash, so the string literal
stays valid and cannot be closed early. Code outside the docstring text is never changed. A prompt with
no bare string literal is returned unchanged by these three.

Newline insertion (ReCode's format perturbation "new lines", which adds empty lines to the code) inserts
each blank line at a line boundary outside string literals: after a NEWLINE or NL token of the prompt
(between statements, after the signature, inside brackets) or at the end of the prompt. These places
keep the prompt and prompt + completion valid Python with the same syntax tree; docstrings are left to
the three families above.

Randomness: a private `random.Random(seed)`, drawn from only through `random()`, once per character (per
inserted line) whatever the level; an edit happens where its draw falls below the level's probability, so with
one seed every level's edits include those of the lower levels. No global state is read or changed. Where this
departs from ReCode's code (exact probabilities, valid prompts): docs/perturbations.md.
"""
from __future__ import annotations

import ast
import io
import keyword
import random
import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from pipeline.perturb.levels import MAX_LEVEL, check_level, check_seed  # noqa: F401  (MAX_LEVEL: the family's levels)

BUTTERFINGERS_P = (0.05, 0.10, 0.15, 0.20, 0.25)
CHAR_CASE_P = (0.1, 0.2, 0.35, 0.5, 0.7)
WHITESPACE_P = ((0.1, 0.05), (0.15, 0.07), (0.2, 0.1), (0.25, 0.12), (0.3, 0.15))  # (p_add, p_del)
NEWLINES = (1, 2, 3, 4, 5)
FAMILIES = ("butterfingers", "char_case", "whitespace", "newline")  # the paper's fixed order

# ReCode's butterfingers key table (QWERTY neighbourhoods, from NL-Augmenter), letters only, without the
# key itself and without repeats.
_RECODE_KEYS = {
    "q": "qwasedzx", "w": "wqesadrfcx", "e": "ewrsfdqazxcvgt", "r": "retdgfwsxcvgt", "t": "tryfhgedcvbnju",
    "y": "ytugjhrfvbnji", "u": "uyihkjtgbnmlo", "i": "iuojlkyhnmlp", "o": "oipklujm", "p": "plo['ik",
    "a": "aqszwxwdce", "s": "swxadrfv", "d": "decsfaqgbv", "f": "fdgrvwsxyhn", "g": "gtbfhedcyjn",
    "h": "hyngjfrvkim", "j": "jhknugtblom", "k": "kjlinyhn", "l": "lokmpujn", "z": "zaxsvde",
    "x": "xzcsdbvfrewq", "c": "cxvdfzswergb", "v": "vcfbgxdertyn", "b": "bvnghcftyun", "n": "nbmhjvgtuik",
    "m": "mnkjloik",
}
BUTTERFINGER_KEYS = {
    key: "".join(dict.fromkeys(c for c in near if c.isalpha() and c != key)) for key, near in _RECODE_KEYS.items()
}

_ESCAPE_RE = re.compile(r"\\(?:N\{[^}]*\}|x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[0-7]{1,3}|\r\n|[\s\S])")
_WORD_RE = re.compile(r"[A-Za-z0-9_]+")
_PREFIX_RE = re.compile(r"([A-Za-z]*)('''|\"\"\"|'|\")")


def _check_prompt(prompt: str) -> None:
    if not isinstance(prompt, str):
        raise TypeError(f"prompt must be a str, got {type(prompt).__name__}")


def _parse(prompt: str) -> ast.Module:
    _check_prompt(prompt)
    try:
        return ast.parse(prompt)
    except SyntaxError as error:
        raise ValueError(f"prompt is not valid Python: {error}") from error


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer("\n", text)]


def _offset(text: str, line_starts: list[int], lineno: int, col_utf8: int) -> int:
    """Character offset of an ast position (1-based line, UTF-8 byte column)."""
    start = line_starts[lineno - 1]
    line = text[start: line_starts[lineno] if lineno < len(line_starts) else len(text)]
    return start + len(line.encode("utf-8")[:col_utf8].decode("utf-8"))


@dataclass(frozen=True)
class DocstringText:
    """Where the docstring families act in a prompt.

    `start`..`end` is the docstring text (prompt[start:end]); `letter_protected` are the offsets of
    characters butterfingers and character case leave alone (identifier words, escape sequences);
    `escape` the offsets inside escape sequences; `quote_guarded` the offsets of whitespace characters
    that must not be deleted (next to a quote or a backslash).
    """

    start: int
    end: int
    letter_protected: frozenset[int]
    escape: frozenset[int]
    quote_guarded: frozenset[int]


def _identifiers(prompt: str) -> frozenset[str]:
    """Names of the prompt's code (NAME tokens that are not keywords)."""
    names = set()
    for token in tokenize.generate_tokens(io.StringIO(prompt).readline):
        if token.type == tokenize.NAME and not keyword.iskeyword(token.string):
            names.add(token.string)
    return frozenset(names)


def _is_single_literal(segment: str) -> bool:
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(segment).readline))
    except (tokenize.TokenError, SyntaxError):
        return False
    return sum(t.type == tokenize.STRING for t in tokens) == 1


@lru_cache(maxsize=4096)
def docstring_text(prompt: str) -> DocstringText | None:
    """The docstring text of `prompt` and its protected characters (module docstring), or None.

    None when the prompt has no bare string-literal statement, when that literal is an implicit
    concatenation, or when its text is empty or only doctest examples. ValueError if the prompt is not
    valid Python.
    """
    tree = _parse(prompt)
    literals = [
        node.value for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    ]
    if not literals:
        return None
    node = max(literals, key=lambda n: (n.lineno, n.col_offset))
    starts = _line_starts(prompt)
    literal_start = _offset(prompt, starts, node.lineno, node.col_offset)
    literal_end = _offset(prompt, starts, node.end_lineno, node.end_col_offset)
    segment = prompt[literal_start:literal_end]
    match = _PREFIX_RE.match(segment)
    if match is None or not segment.endswith(match.group(2)) or not _is_single_literal(segment):
        return None
    content_start, content_end = literal_start + match.end(), literal_end - len(match.group(2))
    content = prompt[content_start:content_end]
    examples = re.search(r"(?m)^[ \t]*>>>", content)
    text = content[: examples.start()] if examples else content
    stripped = text.strip()
    if not stripped:
        return None
    start = content_start + (len(text) - len(text.lstrip()))
    end = start + len(stripped)

    escape = {content_start + i for m in _ESCAPE_RE.finditer(content) for i in range(m.start(), m.end())}
    identifiers = _identifiers(prompt)
    words = {
        i for m in _WORD_RE.finditer(prompt, start, end) if m.group() in identifiers for i in range(m.start(), m.end())
    }
    guarded = set()
    for m in re.finditer(r"\s+", prompt[start:end]):
        left, right = prompt[start + m.start() - 1], prompt[start + m.end()]  # non-whitespace neighbours
        if left in "'\"\\" or right in "'\"\\":
            guarded.update(range(start + m.start(), start + m.end()))
    return DocstringText(start, end, frozenset(escape | words), frozenset(escape), frozenset(guarded))


def _docstring_edit(prompt: str, seed: int, edit: Callable[[DocstringText, int, str, float, float], str]) -> str:
    """Rebuild the prompt with each docstring-text character replaced by `edit(region, offset, char, u, r)`,
    where u and r are that character's two uniform draws (two per character, whatever the level)."""
    _check_prompt(prompt)
    region = docstring_text(prompt)
    if region is None:
        return prompt
    rng = random.Random(seed)
    out = [prompt[: region.start]]
    for i in range(region.start, region.end):
        u, r = rng.random(), rng.random()
        out.append(edit(region, i, prompt[i], u, r))
    out.append(prompt[region.end:])
    return "".join(out)


def butterfingers(prompt: str, level: int, seed: int) -> str:
    """ReCode's butterfingers on the docstring text (TestNav §4.1, footnote 2): each unprotected ASCII
    letter is replaced, with probability `BUTTERFINGERS_P[level - 1]`, by a different nearby key (same
    case) from ReCode's QWERTY table."""
    level, seed = check_level(level), check_seed(seed)
    if level == 0:
        return prompt
    p = BUTTERFINGERS_P[level - 1]

    def edit(region: DocstringText, i: int, c: str, u: float, r: float) -> str:
        keys = BUTTERFINGER_KEYS.get(c.lower())
        if keys is None or not c.isascii() or i in region.letter_protected or u >= p:
            return c
        new = keys[min(int(r * len(keys)), len(keys) - 1)]
        return new.upper() if c.isupper() else new

    return _docstring_edit(prompt, seed, edit)


def char_case(prompt: str, level: int, seed: int) -> str:
    """ReCode's character-case change on the docstring text (TestNav §4.1, footnote 2): each unprotected
    ASCII letter has its case flipped with probability `CHAR_CASE_P[level - 1]`."""
    level, seed = check_level(level), check_seed(seed)
    if level == 0:
        return prompt
    p = CHAR_CASE_P[level - 1]

    def edit(region: DocstringText, i: int, c: str, u: float, r: float) -> str:
        if not (c.isascii() and c.isalpha()) or i in region.letter_protected or u >= p:
            return c
        return c.swapcase()

    return _docstring_edit(prompt, seed, edit)


def whitespace(prompt: str, level: int, seed: int) -> str:
    """ReCode's whitespace perturbation on the docstring text (TestNav §4.1, footnote 2): with
    (p_add, p_del) = `WHITESPACE_P[level - 1]`, a space is added after each non-whitespace character with
    probability p_add and each whitespace character is deleted with probability p_del (one draw per
    character, as ReCode), except inside escape sequences and next to quotes or backslashes."""
    level, seed = check_level(level), check_seed(seed)
    if level == 0:
        return prompt
    p_add, p_del = WHITESPACE_P[level - 1]

    def edit(region: DocstringText, i: int, c: str, u: float, r: float) -> str:
        if i in region.escape:
            return c
        if c.isspace():
            return "" if u < p_del and i not in region.quote_guarded else c
        return c + " " if u < p_add else c

    return _docstring_edit(prompt, seed, edit)


def newline_slots(prompt: str) -> list[int]:
    """Offsets where a blank line can be inserted: after each NEWLINE / NL token ending in a line break,
    and the end of the prompt (sorted, unique). ValueError if the prompt is not valid Python."""
    _parse(prompt)
    starts = _line_starts(prompt)
    slots = {len(prompt)}
    for token in tokenize.generate_tokens(io.StringIO(prompt).readline):
        if token.type in (tokenize.NEWLINE, tokenize.NL) and token.string.endswith("\n"):
            slots.add(starts[token.end[0] - 1] + token.end[1])  # tokenize columns count characters
    return sorted(slots)


def newline(prompt: str, level: int, seed: int) -> str:
    """Newline insertion (TestNav §4.1, footnote 2; ReCode's "new lines"): add `NEWLINES[level - 1]`
    line breaks, each at a slot of `newline_slots` drawn uniformly (with replacement, so blank lines can
    stack). A slot after a line break makes a blank line; the end slot of a prompt without a final
    line break ends its last line first."""
    level, seed = check_level(level), check_seed(seed)
    if level == 0:
        return prompt
    slots = newline_slots(prompt)
    rng = random.Random(seed)
    counts: dict[int, int] = {}
    for _ in range(NEWLINES[level - 1]):
        slot = slots[min(int(rng.random() * len(slots)), len(slots) - 1)]
        counts[slot] = counts.get(slot, 0) + 1
    out, last = [], 0
    for slot in sorted(counts):
        out.append(prompt[last:slot])
        out.append("\n" * counts[slot])
        last = slot
    out.append(prompt[last:])
    return "".join(out)


APPLY: dict[str, Callable[[str, int, int], str]] = {
    "butterfingers": butterfingers, "char_case": char_case, "whitespace": whitespace, "newline": newline,
}
