"""The report page and the priority lists (pipeline.report), on a small synthetic outputs folder and, when
the stages' files are present, on the real `outputs/`."""
from __future__ import annotations

import base64
import io
import json
import math
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from pipeline.paired.screening import budget_size
from pipeline.report import mark_edits, markdown_tables, priority_lists, render_report
from pipeline.report.provenance import collect_provenance

ROOT = Path(__file__).resolve().parents[2]
SECTIONS = ("benchmarks", "paired", "screening", "fuzzing", "provenance")
CLEAN = 'def f(a, b):\n    return a < b & "x"\n'
TEXTS = ['def f(a, b):\n\n    return a <= b & "x"\n', 'def f(a,b):\n    retrun a < b & "y"\n', CLEAN]
BUDGETS = (0.1, 0.2, 0.3)


class Page(HTMLParser):
    """What the checks read from a page: ids, image sources, link targets, attribute values, the text of
    the <style> element, the cells of every table by id, and the segments of every pre.diff."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.ids, self.imgs, self.hrefs, self.attrs, self.style = set(), [], [], [], ""
        self.tables: dict[str, list[list[str]]] = {}
        self.diffs: list[list[tuple[str, str]]] = []
        self._stack: list[str] = []
        self._table = self._cell = self._diff = None
        self._mark = "text"
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.attrs += [v for v in a.values() if v]
        self._stack.append(tag)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "img":
            self.imgs.append(a.get("src", ""))
        if tag == "a":
            self.hrefs.append(a.get("href", ""))
        if tag == "table" and "id" in a:
            self._table = self.tables.setdefault(a["id"], [])
        if tag == "tr" and self._table is not None:
            self._table.append([])
        if tag in ("td", "th") and self._table is not None:
            self._cell = ""
        if tag == "pre" and "diff" in (a.get("class") or ""):
            self._diff = []
        if tag in ("ins", "del") and self._diff is not None:
            self._mark = tag

    def handle_endtag(self, tag):
        self._stack.pop()
        if tag in ("td", "th") and self._cell is not None and self._table is not None:
            self._table[-1].append(self._cell.strip())
            self._cell = None
        if tag == "table":
            self._table = None
        if tag in ("ins", "del"):
            self._mark = "text"
        if tag == "pre" and self._diff is not None:
            self.diffs.append(self._diff)
            self._diff = None

    def handle_data(self, data):
        if self._stack and self._stack[-1] == "style":
            self.style += data
        if self._cell is not None:
            self._cell += data
        if self._diff is not None:
            self._diff.append((self._mark, data))


def _png(path: Path, size: tuple[int, int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 255, (size[1], size[0], 3), dtype=np.uint8)).save(path)


def _records(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Synthetic (2 conditions) and real (3 conditions) records of two models on 40 images, half of them eval."""
    rng = np.random.default_rng(seed)
    ids = [f"img{i:02d}" for i in range(40)]
    y = rng.integers(0, 3, 40)
    syn, real = [], []
    for model in ("m1", "m2"):
        clean_pred = np.where(rng.random(40) < 0.15, (y + 1) % 3, y)
        base = {"model": model, "group": "g", "image_id": ids, "split": ["dev"] * 20 + ["eval"] * 20, "y": y,
                "clean_pred": clean_pred, "clean_maxprob": rng.uniform(0.5, 1, 40), "clean_trueprob": rng.uniform(0, 1, 40)}
        for c in ("s1", "s2"):
            syn.append(pd.DataFrame({**base, "condition": c, "pert_pred": np.where(rng.random(40) < 0.3, (y + 2) % 3, y),
                                     "pert_trueprob": rng.uniform(0, 1, 40), "pert_maxprob": rng.uniform(0.5, 1, 40)}))
        for c in ("r1", "r2", "r3"):
            real.append(pd.DataFrame({**base, "condition": c, "pert_pred": np.where(rng.random(40) < 0.4, (y + 1) % 3, y),
                                      "pert_trueprob": rng.uniform(0, 1, 40), "pert_maxprob": rng.uniform(0.5, 1, 40)}))
    return pd.concat(syn, ignore_index=True), pd.concat(real, ignore_index=True)


@pytest.fixture(scope="module")
def synthetic_outputs(tmp_path_factory) -> tuple[Path, Path]:
    """(outputs folder, page folder) holding every file the report reads, for an image benchmark `vis` and
    a code benchmark `txt`, one paired source `src` (screened) and one fuzzing adapter `geo`."""
    out = tmp_path_factory.mktemp("outputs")
    page = out / "report"
    for name, clean in (("vis", "accuracy"), ("txt", "robust_pass")):
        (out / "groundtruth").mkdir(exist_ok=True)
        (out / "groundtruth" / f"{name}.summary.json").write_text(json.dumps(
            {"benchmark": name, f"clean_{clean}": 0.875, "space_size": 16, "pareto": {}}))
        (out / "prepare").mkdir(exist_ok=True)
        (out / "prepare" / f"{name}.json").write_text(json.dumps({"n_test": 40, "model_test_accuracy": 0.875}))
        _png(out / "figures" / "groundtruth" / name / "pareto.png", (1600, 400))
        _png(out / "figures" / "groundtruth" / name / "gallery_m.png", (300, 300))
    thetas = np.array([[0, 1], [1, 1], [0, 0]])
    images = np.random.default_rng(1).integers(0, 255, (3, 8, 8, 3), dtype=np.uint8)
    np.savez(out / "groundtruth" / "vis.gallery.npz", thetas=thetas, images=images, clean=images[2], label=3)
    np.savez(out / "groundtruth" / "txt.gallery.npz", thetas=thetas, images=np.array(TEXTS, dtype=str), clean=np.array(CLEAN), label=0)
    s = out / "search_summary"
    s.mkdir()
    rows = [(b, m, meth, 0.5 + 0.01 * i + 0.1 * j, 0.01 * (i + 1), "best" if i == 1 else "second" if i == 0 else "")
            for j, (b, m) in enumerate([("vis", "ssim"), ("vis", "kid"), ("txt", "chrf")])
            for i, meth in enumerate(("testnav", "random", "pnd"))]
    pd.DataFrame(rows, columns=["benchmark", "metric", "method", "auc_mean", "auc_std", "mark"]).to_csv(s / "table2.csv", index=False)
    pd.DataFrame([("vis", "ssim", 3, 1, 1), ("txt", "chrf", 2, 2, 0)],
                 columns=["benchmark", "metric", "size", "order_1", "order_2"]).to_csv(s / "table3.csv", index=False)
    rec = pd.DataFrame([(b, m, meth, 10, 7, 100.0, 5.0, 60.0, 110.0, 300.0, 20.0, 1.0, 1.0, 1.5, np.nan)
                        for b, m, meth, *_ in rows],
                       columns=["benchmark", "metric", "method", "seeds", "reached", "u_full_mean", "u_full_sd", "u_full_pct",
                                "u_cens_median", "b_full_mean", "b_full_sd", "final_recall_mean", "final_recall_min", "speedup_u", "speedup_b"])
    rec.to_csv(s / "recovery.csv", index=False)
    p = out / "paired" / "src"
    (p / "screening").mkdir(parents=True)
    pd.DataFrame({"target": ["H", "L"], "W0": [0.3, 0.2], "W1": [0.2, 0.1], "W2": [0.1, 0.05], "n_cells": [4, 4]}).to_csv(p / "widths.csv", index=False)
    pd.DataFrame({"lam": [0.0, 0.5], "n_cells": [4, 4], "shared_pairs": [2, 3]}).to_csv(p / "certified.csv", index=False)
    (p / "table4.md").write_text("Policy comparisons, λ = 0.5.\n\n| | cells |\n|---|---|\n| shared \\| x | **3** |\n")
    (p / "screening" / "metrics.json").write_text(json.dumps(
        {"n_models": 2, "scored_images": 30, "tier_counts": {"mild": 2, "extreme": 1},
         "headline": {"mild": {"cells": 4, "auroc_U": 0.8, "auroc_S": 0.7, "auroc_U-S": {"estimate": 0.1, "lo": 0.05, "hi": 0.15},
                               "coverage_0.2_U": 0.5, "coverage_0.2_S": 0.4}}}))
    _png(out / "figures" / "paired" / "src" / "widths.png", (400, 300))
    _png(out / "figures" / "screening" / "src" / "coverage.png", (400, 300))
    f = out / "fuzz" / "geo"
    f.mkdir(parents=True)
    (f / "summary.txt").write_text("Structural fuzzing report (see https://example.org in text only)\n1. Subsets: 3\n")
    (f / "metrics.json").write_text(json.dumps({"adapter": "geo", "mri": 4.5, "n_evaluations": 120}))
    _png(out / "figures" / "fuzz" / "geo" / "frontier.png", (400, 300))
    syn, real = _records()
    for model, table in priority_lists(syn, real, BUDGETS).items():
        (page / "priority" / "src").mkdir(parents=True, exist_ok=True)
        table.to_csv(page / "priority" / "src" / f"{model}.csv", index=False)
    return out, page


def check_page(html: str, page_dir: Path) -> Page:
    """The checks every report page passes: sections present, images PNG data URIs (or files beside the
    page), links to ids of the page or files beside it, no URL outside text; returns the parsed page."""
    page = Page(html)
    assert set(SECTIONS) <= page.ids
    for src in page.imgs:
        if src.startswith("data:"):
            assert src.startswith("data:image/png;base64,")
            assert base64.b64decode(src.split(",", 1)[1]).startswith(b"\x89PNG\r\n\x1a\n")
        else:
            assert (page_dir / src).is_file() and ":" not in src, src
    for href in page.hrefs:
        if href.startswith("#"):
            assert href[1:] in page.ids, href
        else:
            assert ":" not in href and not href.startswith("/") and (page_dir / href).is_file(), href
    assert not [v for v in page.attrs if re.search(r"https?://", v) and not v.startswith("data:")]
    assert not re.search(r"https?://|@import|url\(", page.style)
    return page


def _page(outputs: Path, page_dir: Path) -> str:
    return render_report(outputs, page_dir, models={"vis": "cnn", "txt": "retrieval"}, repo=outputs)


def test_page_structure_links_and_images(synthetic_outputs):
    outputs, page_dir = synthetic_outputs
    html = _page(outputs, page_dir)
    page = check_page(html, page_dir)
    assert {"benchmark-vis", "benchmark-txt", "paired-src", "screening-src", "fuzz-geo"} <= page.ids
    assert "gallery_m.png" not in html                     # galleries come from the .npz, not the figures
    assert [h for h in page.hrefs if not h.startswith("#")] == ["priority/src/m1.csv", "priority/src/m2.csv"]
    assert len(page.imgs) == 2 + 4 + 1 + 1 + 1             # two P* figures, clean + 3 thumbnails, paired, screening, fuzz
    widths = [Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1]))).width for src in page.imgs]
    assert max(widths) == 1100                             # the 1,600 px figures are downscaled
    assert "https://example.org" in html                   # a URL inside text stays text


def test_table2_reads_back(synthetic_outputs):
    outputs, page_dir = synthetic_outputs
    page = Page(_page(outputs, page_dir))
    source = pd.read_csv(outputs / "search_summary" / "table2.csv")
    labels = {"testnav": "TestNav", "random": "Random Search", "pnd": "GP-PND"}
    for bench in ("vis", "txt"):
        header, *rows = page.tables[f"table2-{bench}"]
        expected = source[source["benchmark"] == bench]
        assert header[1:] == list(dict.fromkeys(expected["metric"]))
        for row in rows:
            for metric, cell in zip(header[1:], row[1:]):
                mean, sd = (float(x) for x in cell.split("±"))
                want = expected[(expected["metric"] == metric) & (expected["method"].map(labels) == row[0])].iloc[0]
                assert (mean, sd) == (round(want["auc_mean"], 3), round(want["auc_std"], 3))
        assert len(rows) == expected["method"].nunique()


def test_text_edits_are_marked():
    marked = [mark_edits(CLEAN, t) for t in TEXTS]
    page = Page("".join(f'<pre class="diff">{m}</pre>' for m in marked))
    assert {"ins", "del"} <= {k for k, _ in page.diffs[1]}          # a replacement: a <del>/<ins> pair
    assert {k for k, _ in page.diffs[2]} == {"text"}                # the identity: nothing marked
    for diff, perturbed in zip(page.diffs, TEXTS):
        assert "".join(t for k, t in diff if k != "del") == perturbed
        assert "".join(t for k, t in diff if k != "ins") == CLEAN
    assert "&lt;" in marked[0] and '<ins class="nl">' in marked[0]  # escaped text; a line-break edit flagged


def test_text_gallery_in_page(synthetic_outputs):
    outputs, page_dir = synthetic_outputs
    page = Page(_page(outputs, page_dir))
    assert len(page.diffs) == 3                            # the txt benchmark's three P* texts, identity first
    pairs = [d for d in page.diffs if {"ins", "del"} <= {k for k, _ in d}]
    assert pairs
    for diff in page.diffs:
        assert "".join(t for k, t in diff if k != "ins") == CLEAN
        assert "".join(t for k, t in diff if k != "del") in TEXTS


def test_markdown_tables():
    html = str(markdown_tables("Title `x`.\n\n| a | b \\| c |\n|---|---:|\n| **1** | <u>2</u> |\n"))
    assert "<p>Title <code>x</code>.</p>" in html
    assert "<th>b | c</th>" in html and "<td><strong>1</strong></td>" in html and "<td><u>2</u></td>" in html


def test_run_dependent_values_are_marked(synthetic_outputs, tmp_path):
    outputs, page_dir = synthetic_outputs
    (outputs / "dvc.lock").write_text("schema: '2.0'\n")
    def strip(html: str) -> str:
        return re.sub(r"<dd data-run-dependent>.*?</dd>", "", html)

    first, second = _page(outputs, page_dir), _page(outputs, page_dir)
    assert strip(first) == strip(second)
    provenance = collect_provenance(outputs)
    assert provenance["run"]["git commit"] == "unknown" or len(provenance["run"]["git commit"]) == 40
    assert len(provenance["run"]["dvc.lock sha256"]) == 64 and provenance["pinned"]["OMP_NUM_THREADS"] == "1"


def test_empty_suite_builds(tmp_path):
    (tmp_path / "outputs").mkdir()
    html = render_report(tmp_path / "outputs", tmp_path / "report", provenance={"run": {}, "pinned": {}})
    page = check_page(html, tmp_path / "report")
    assert "No benchmark reported." in html and not page.imgs


def test_missing_input_names_file_and_stage(synthetic_outputs):
    outputs, page_dir = synthetic_outputs
    with pytest.raises(ValueError, match=r"missing input .*nope\.summary\.json: run `dvc repro groundtruth`"):
        render_report(outputs, page_dir, benchmarks=["nope"], provenance={"run": {}, "pinned": {}})


def test_priority_lists_against_brute_force():
    syn, real = _records()
    lists = priority_lists(syn, real, BUDGETS)
    assert sorted(lists) == ["m1", "m2"]
    for model, table in lists.items():
        s = syn[(syn["model"] == model) & (syn["split"] == "eval") & (syn["clean_pred"] == syn["y"])]
        u = s.groupby("image_id")["pert_trueprob"].mean()
        n = len(u)
        assert list(table["rank"]) == list(range(1, n + 1))
        assert list(table["image_id"]) == list(u.sort_values().index)           # rank 1: the lowest U (risk -U)
        assert np.allclose(table["U"], u.sort_values().to_numpy())
        assert list(table["true_label"]) == list(s.groupby("image_id")["y"].first()[table["image_id"]])
        assert np.allclose(table["S"], s.groupby("image_id")["clean_maxprob"].first()[table["image_id"]])
        assert table["U"].is_monotonic_increasing
        r = real[real["model"] == model]
        for q in BUDGETS:
            k = math.floor(q * n + 0.5)
            assert k == int(budget_size(n, q))
            assert list(table[f"in_budget_{q:g}"]) == [rank <= k for rank in table["rank"]]
            chosen = set(table["image_id"][:k])
            shares = []
            for _, cell in r[r["image_id"].isin(u.index)].groupby("condition"):
                failed = set(cell.loc[cell["pert_pred"] != cell["y"], "image_id"])
                if failed:
                    shares.append(len(failed & chosen) / len(failed))
            assert table[f"coverage_{q:g}"].nunique() == 1
            assert table[f"coverage_{q:g}"].iloc[0] == pytest.approx(np.mean(shares))


REAL = ROOT / "outputs"


# The DVC-cached stage outputs (galleries, records) exist after `make repro`, not in a fresh clone (git holds the rest)
@pytest.mark.skipif(not list((REAL / "groundtruth").glob("*.gallery.npz")) or not (REAL / "records" / "digits.parquet").exists(),
                    reason="no DVC-cached stage outputs under outputs/ (run make repro)")
def test_real_outputs(tmp_path):
    records, recapture = REAL / "records" / "digits.parquet", REAL / "records" / "digits-recapture.parquet"
    if records.exists() and recapture.exists():
        from pipeline.paired import read_records

        lists = priority_lists(read_records(records), read_records(recapture), BUDGETS)
        for model, table in lists.items():
            (tmp_path / "priority" / "digits").mkdir(parents=True, exist_ok=True)
            table.to_csv(tmp_path / "priority" / "digits" / f"{model}.csv", index=False)
        cells = REAL / "paired" / "digits" / "screening" / "cells.parquet"
        if cells.exists():                                 # the screening stage's own coverage of -U, per model
            cells = pd.read_parquet(cells)
            screened = cells[cells["score"] == "neg_U"].groupby("model")[[f"coverage_{q:g}" for q in BUDGETS]].mean()
            for model, table in lists.items():
                assert table[screened.columns].iloc[0].to_numpy() == pytest.approx(screened.loc[model].to_numpy())
    html = render_report(REAL, tmp_path, repo=ROOT)
    page = check_page(html, tmp_path)
    assert any(i.startswith("benchmark-") for i in page.ids)
    assert len(html.encode()) < 5e6


def test_priority_lists_passed_or_read_give_one_page(synthetic_outputs):
    outputs, page_dir = synthetic_outputs
    fixed = {"run": {}, "pinned": {}}
    syn, real = _records()
    passed = render_report(outputs, page_dir, priority={"src": priority_lists(syn, real, BUDGETS)}, provenance=fixed)
    assert passed == render_report(outputs, page_dir, provenance=fixed)
    header, *rows = Page(passed).tables["priority-src"]
    assert header == ["model", "images", *(f"expected coverage, q = {q:g}" for q in BUDGETS)]
    assert [r[0] for r in rows] == ["m1", "m2"]


def test_the_stage_keeps_run_dependent_provenance_out_of_the_page(synthetic_outputs):
    """With `run_script`, the page names the script and holds no run-dependent value: it is the same bytes on
    every machine and run (DVC records its md5); the script carries the commit, machine and time."""
    from pipeline.report.provenance import run_script

    outputs, page_dir = synthetic_outputs
    fixed = {"run": {"git commit": "commit-3f9e", "built at (UTC)": "when-1"}, "versions": {"numpy": "1"}, "pinned": {"OMP_NUM_THREADS": "1"}}
    html = render_report(outputs, page_dir, provenance=fixed, run_script="../timings/report/provenance.js")
    assert '<script src="../timings/report/provenance.js"></script>' in html and 'id="run-provenance"' in html
    assert "data-run-dependent" not in html and "commit-3f9e" not in html and "when-1" not in html and "<dd>1</dd>" in html
    later = {**fixed, "run": {"git commit": "def", "built at (UTC)": "later"}}
    assert html == render_report(outputs, page_dir, provenance=later, run_script="../timings/report/provenance.js")
    script = run_script(fixed["run"])
    assert json.loads(script[script.index("{", script.index("var run")):script.index("};") + 1]) == fixed["run"]


def test_headline_metrics_are_few_and_are_the_tables_numbers(tmp_path):
    """`dvc metrics show` lists the headline file only: at most about 80 numbers, each read from its table."""
    from pipeline.report.headline import count_values, headline_metrics

    out = tmp_path / "outputs"
    (out / "groundtruth").mkdir(parents=True)
    (out / "search_summary").mkdir()
    (out / "paired" / "src" / "screening").mkdir(parents=True)
    (out / "groundtruth" / "b.summary.json").write_text(json.dumps(
        {"benchmark": "b", "clean_accuracy": 0.9, "pareto": {"m": {"size": 5}}, "space_size": 9}))
    pd.DataFrame({"benchmark": ["b", "b"], "metric": ["m", "m"], "method": ["testnav", "pnd"], "auc_mean": [0.6, 0.8]}).to_csv(
        out / "search_summary" / "table2.csv", index=False)
    pd.DataFrame({"benchmark": ["b"], "metric": ["m"], "method": ["testnav"], "u_full_mean": [7.5]}).to_csv(
        out / "search_summary" / "recovery.csv", index=False)
    (out / "paired" / "src" / "bounds.json").write_text(json.dumps({"widths": {"dM_k": {"W0": 0.3, "W1": 0.2, "W2": 0.1}}}))
    mild = {"auroc_U": 0.9, "auroc_S": 0.7, "coverage_0.2_U": 0.5, "coverage_0.2_S": 0.4}
    (out / "paired" / "src" / "screening" / "metrics.json").write_text(json.dumps({"headline": {"mild": mild}}))
    head = headline_metrics(out, ["b"], ["src"], ["src"])
    assert head["benchmarks"]["b"] == {"clean": 0.9, "pareto_size": {"m": 5},
                                       "m": {"testnav": {"auc": 0.6, "u_full": 7.5}, "pnd": {"auc": 0.8, "u_full": None}}}
    assert head["paired"]["src"] == {"W0": 0.3, "W1": 0.2, "W2": 0.1} and head["screening"]["src"] == mild
    if (REAL / "headline.json").exists():  # the real run: four benchmarks, two paired sources, one screening
        assert count_values(json.loads((REAL / "headline.json").read_text())) <= 80


def test_one_seed_has_no_spread_and_counts_have_no_decimals():
    from pipeline.report.sections import recovery_of, table2_of

    table2 = pd.DataFrame({"benchmark": ["b", "b"], "metric": ["m", "m"], "method": ["testnav", "epal"],
                           "auc_mean": [0.61234, 0.7], "auc_std": [0.02, np.nan], "mark": ["", "best"]})
    cells = {row[0]: str(row[1]) for row in table2_of(table2, "b")["rows"]}
    assert cells["TestNav"] == "0.612 ± 0.020" and "±" not in cells["ε-PAL"] and "0.700" in cells["ε-PAL"]
    rec = pd.DataFrame([("b", "m", "testnav", 10, 10, 600.0, 12.5, 46.3, 1200.0, 6480.0, np.nan, 1.0, 1.0, 1.0, 1.0)],
                       columns=["benchmark", "metric", "method", "seeds", "reached", "u_full_mean", "u_full_sd", "u_full_pct",
                                "u_cens_median", "b_full_mean", "b_full_sd", "final_recall_mean", "final_recall_min", "speedup_u",
                                "speedup_b"])
    row = dict(zip(recovery_of(rec, "b", ["testnav"])["header"], recovery_of(rec, "b", ["testnav"])["rows"][0]))
    assert (row["u (mean)"], row["u (sd)"], row["b (mean)"], row["b (sd)"]) == ("600", "12.5", "6,480", "–")
