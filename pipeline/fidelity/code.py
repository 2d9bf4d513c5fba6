"""Code fidelity (TestNav §4.1, benchmark (iii)): chrF and BERT-F1 of perturbed prompts against their clean
originals, on the replicated input set of the code benchmarks (`pipeline.code.robust_pass.replicate`: each
problem's prompt held s times in a row, input i·s + k being variant k of problem i).

Which rows: `variant_rows(n_problems, s, k)` picks the first k variants of each problem. The embedded
HumanEval config scores fidelity on the first variant of each problem (k = 1): φ(T_θ, D) is then measured
on one perturbed prompt per problem, the same number of texts as the paper's one-prompt-per-problem D,
while ψ = RP5@1 uses all five. Variant 0 is a draw like any other (its seeds differ from the other
variants' only through the input index), so this is an unbiased one-sample estimate of the five-variant
mean, at a fifth of the cost.

chrF (`chrf_code`): SacreBLEU's corpus chrF as for text (`ChrFFidelity`) but with `whitespace=True`.
SacreBLEU's default removes all whitespace before extracting character n-grams (it was made for
translation), which would make chrF blind to two of the four code perturbations (whitespace, newline);
in code, whitespace is syntax (indentation, line breaks) and code models read it as tokens.

BERT-F1 (`bert_f1_code`): `BERTScoreFidelity` on the shared all-MiniLM-L6-v2 encoder (CodeBERT, the
paper's encoder for code, is not available offline). Its uncased WordPiece tokenizer maps prompts that
differ only in letter case or in runs of whitespace to the same token ids, and an encoding is a pure
function of the token ids (`pipeline.models.text_encoder`), so `CodeBERTScoreFidelity` encodes one text per
distinct token sequence: every configuration that differs from an earlier one only in the newline level
(blank lines), or only in character case where whitespace is off, reuses its encodings exactly. In the
lexicographic order of the ground truth this is 5 of every 6 configurations.

Per input (`pipeline.fidelity.text`): both metrics give their per-input values (`per_input`,
and chrF's `per_input_statistics`) for the scored rows only, indexed by `scored`; with k = 1 that is one
value per problem, in problem order, the unit a bootstrap over problems resamples (with k > 1, a problem's
k rows are averaged, or their chrF statistics summed). `CodeBERTScoreFidelity.per_input` equals
`BERTScoreFidelity.per_input` value for value: a reused encoding is the encoding of the same token ids.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from pipeline.fidelity.text import BERTScoreFidelity, ChrFFidelity


def variant_rows(n_inputs: int, variants: int, per_problem: int | None) -> list[int] | None:
    """Positions of the first `per_problem` variants of each problem in a replicated set of `n_inputs`
    inputs with `variants` rows per problem; None (all rows) when `per_problem` is None or `variants`."""
    if variants < 1 or n_inputs % variants:
        raise ValueError(f"{n_inputs} inputs are not whole problems of {variants} variants")
    if per_problem is None or per_problem >= variants:
        return None
    if per_problem < 1:
        raise ValueError(f"per_problem must be at least 1, got {per_problem}")
    return [i + k for i in range(0, n_inputs, variants) for k in range(per_problem)]


def code_chrf(clean: Sequence[str], rows: Sequence[int] | None = None) -> ChrFFidelity:
    """chrF that counts whitespace, on `rows` of the input set (None = all)."""
    return ChrFFidelity(list(clean), whitespace=True, rows=rows)


class CodeBERTScoreFidelity(BERTScoreFidelity):
    """`BERTScoreFidelity` that encodes one text per distinct token sequence (see the module docstring);
    values are identical to `BERTScoreFidelity`'s. `canonical` bounds how many token sequences are
    remembered (least recently used first out)."""

    def __init__(self, clean: Sequence[str], encoder=None, *, rows: Sequence[int] | None = None, canonical: int = 4096) -> None:
        super().__init__(clean, encoder, rows=rows)
        self._canonical: OrderedDict[tuple[int, ...], str] = OrderedDict()
        self._limit = int(canonical)
        self.reused = 0  # texts answered by the encoding of an earlier text with the same token ids

    def _representative(self, ids: list[int], text: str) -> str:
        key = tuple(ids)
        found = self._canonical.get(key)
        if found is not None:
            self._canonical.move_to_end(key)
            self.reused += found != text
            return found
        self._canonical[key] = text
        if len(self._canonical) > self._limit:
            self._canonical.popitem(last=False)
        return text

    def _encodable(self, texts: list[str]) -> list[str]:
        return [self._representative(ids, t) for ids, t in zip(self.encoder.token_ids(texts), texts)]
