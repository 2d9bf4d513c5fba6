"""`make verify`'s comparison by meaning: what agrees, what breaks a conclusion, and the exit code of the script on a
reproduction and on a perturbed one."""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from pipeline.report.agreement import Tolerance, compare_bytes, compare_json, compare_tables, compare_text

ROOT = Path(__file__).resolve().parents[2]
TOL = Tolerance()


def table(**overrides) -> pd.DataFrame:
    base = {"config": ["0000", "0001", "0010"], "on_front": [True, False, True], "level": [0, 1, 2],
            "delta": [0.25, 0.5, 0.125], "rho": [0.9, 0.8, float("nan")]}
    return pd.DataFrame({**base, **overrides})


def test_tables_agree_within_the_tolerance_and_membership_exactly() -> None:
    assert compare_tables("t", table(), table(), TOL) == []
    assert compare_tables("t", table(delta=[0.25 * (1 + 1e-7), 0.5, 0.125]), table(), TOL) == []
    [moved] = compare_tables("t", table(delta=[0.26, 0.5, 0.125]), table(), TOL)
    assert moved.where == "column 'delta'" and moved.breaks and moved.size == pytest.approx(0.01)
    [flipped] = compare_tables("t", table(on_front=[True, True, True]), table(), TOL)
    assert flipped.where == "column 'on_front'" and "row 1" in flipped.what
    assert compare_tables("t", table(level=[0, 1, 3]), table(), TOL)[0].where == "column 'level'"
    assert compare_tables("t", table().drop(columns="rho"), table(), TOL)[0].where == "columns"
    assert compare_tables("t", table().iloc[:2], table(), TOL)[0].where == "rows"


def test_json_floats_within_the_tolerance_the_rest_exactly() -> None:
    theirs = {"accuracy": 0.9778, "core": [3, 17], "method": "pnd", "runs": {"stopped": True, "cost": 0.2}}
    assert compare_json("s", theirs, theirs, TOL) == []
    assert compare_json("s", {**theirs, "accuracy": 0.9778 + 1e-9}, theirs, TOL) == []
    assert [d.where for d in compare_json("s", {**theirs, "accuracy": 0.975}, theirs, TOL)] == ["accuracy"]
    assert [d.where for d in compare_json("s", {**theirs, "core": [3, 18]}, theirs, TOL)] == ["core[1]"]
    assert [d.where for d in compare_json("s", {**theirs, "runs": {"stopped": False, "cost": 0.2}}, theirs, TOL)] == ["runs.stopped"]


def test_text_numbers_within_one_printed_digit_words_exactly() -> None:
    theirs = "| TestNav | 0.612 [0.580, 0.640] | beats |\n| hash | 4b19a043 | 1,234 |"
    assert compare_text("m", theirs.replace("0.612", "0.613"), theirs, TOL) == []  # a rounding that flipped
    assert compare_text("m", theirs.replace("1,234", "1,235"), theirs, TOL) == []
    assert [d.what for d in compare_text("m", theirs.replace("0.612", "0.615"), theirs, TOL)] == ["0.615 against 0.612"]
    assert compare_text("m", theirs.replace("beats", "tie"), theirs, TOL)[0].where == "line 1"
    assert compare_text("m", theirs.replace("4b19a043", "5b19a043"), theirs, TOL)[0].where == "line 2"  # a hash is a word


def test_figures_differ_without_breaking_and_tables_by_their_suffix() -> None:
    [figure] = compare_bytes("f.png", b"\x89PNG1", b"\x89PNG2", TOL)
    assert not figure.breaks
    ours, theirs = io.BytesIO(), io.BytesIO()
    table(delta=[0.25, 0.5, 0.2]).to_parquet(ours)
    table().to_parquet(theirs)
    assert compare_bytes("t.parquet", ours.getvalue(), theirs.getvalue(), TOL)[0].where == "column 'delta'"
    assert compare_bytes("t.csv", b"a,b\n1,0.5\n", b"a,b\n1,0.50000001\n", TOL) == []


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True)


def test_verify_exits_0_on_a_reproduction_and_1_naming_a_changed_conclusion(tmp_path: Path) -> None:
    """The script on a repository of its own: published outputs committed, then regenerated with float noise
    (agrees), then with a front member flipped (differs, named)."""
    (tmp_path / "out").mkdir()
    (tmp_path / "dvc.lock").write_text("schema: '2.0'\nstages:\n  s:\n    cmd: x\n    outs:\n    - path: out/front.csv\n"
                                       "      md5: a\n    - path: out/summary.json\n      md5: b\n")
    (tmp_path / "out" / "front.csv").write_text("config,on_front,delta\n0001,True,0.25\n0002,False,0.5\n")
    (tmp_path / "out" / "summary.json").write_text(json.dumps({"accuracy": 0.9778}))
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "published")
    script = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); import scripts.verify as v; from pathlib import Path; "
              f"v.ROOT = Path({str(tmp_path)!r}); sys.exit(v.main(sys.argv[1:]))")

    def verify() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)

    (tmp_path / "out" / "front.csv").write_text("config,on_front,delta\n0001,True,0.2500000001\n0002,False,0.5\n")
    agree = verify()
    assert agree.returncode == 0, agree.stdout + agree.stderr
    assert "1 agree" in agree.stdout and "1 identical" in agree.stdout
    (tmp_path / "out" / "front.csv").write_text("config,on_front,delta\n0001,True,0.25\n0002,True,0.5\n")
    (tmp_path / "out" / "summary.json").write_text(json.dumps({"accuracy": 0.975}))
    differ = verify()
    assert differ.returncode == 1
    assert "out/front.csv  column 'on_front'" in differ.stdout and "out/summary.json  accuracy: 0.975 against 0.9778" in differ.stdout
