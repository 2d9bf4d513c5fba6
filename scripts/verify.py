"""`make verify`: compare this tree's regenerated outputs with the published ones by meaning (what each file is
compared by: `pipeline.report.agreement`), print what differs and by how much, and exit 0 when every
conclusion holds (1 when one does not).

    python scripts/verify.py [--against REV] [--rtol 1e-4] [--atol 1e-6]

The outputs are those `dvc.lock` records; the published version of each is the one committed at REV (HEAD:
what the clone came with, before `make repro` rewrote it)."""
from __future__ import annotations

import argparse
import subprocess
import sys
from collections import Counter
from pathlib import Path

import yaml

from pipeline.report.agreement import Difference, Tolerance, compare_bytes
from pipeline.stages.layout import ROOT


CODE_LISTINGS = "outputs/stage_code/"  # each stage's source files and their md5s (stage_code)


def lock_outputs(lock_text: str | bytes) -> dict[str, str]:
    """Every stage's outputs in a `dvc.lock`, path -> md5, in its order."""
    stages = yaml.safe_load(lock_text)["stages"]
    return {out["path"]: out.get("md5", "") for stage in stages.values() for out in stage.get("outs", [])}


def compare(root: Path, rev: str, tol: Tolerance) -> tuple[Counter, list[Difference]]:
    """Counts of files identical, agreeing, drawn and differing, and the differences, of the outputs in `root`'s
    `dvc.lock` against those committed at `rev`."""

    def git(*args: str) -> bytes:
        return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True).stdout

    counts: Counter = Counter()
    differences: list[Difference] = []
    regenerated = lock_outputs((root / "dvc.lock").read_text())
    for out, md5 in lock_outputs(git("show", f"{rev}:dvc.lock")).items():
        committed = git("ls-tree", "-r", "--name-only", rev, "--", out).decode().splitlines()
        if not committed:  # an output DVC caches and git ignores (ground truths, search runs): only its md5 is published
            counts["files"] += 1
            if regenerated.get(out) == md5:
                counts["identical"] += 1
            else:
                counts["drawn"] += 1
                differences.append(Difference(out, "md5", "another md5 than the published lock's (git does not hold "
                                              "it; the tables summarising it are compared)", breaks=False))
            continue
        here = [str(p.relative_to(root)) for p in sorted((root / out).rglob("*")) if p.is_file()] \
            if (root / out).is_dir() else ([out] if (root / out).is_file() else [])
        for path in sorted(set(committed) | set(here)):
            counts["files"] += 1
            if path not in here:
                differences.append(Difference(path, "file", "published, not regenerated here"))
                continue
            if path not in committed:
                differences.append(Difference(path, "file", "regenerated here, not published"))
                continue
            ours, theirs = (root / path).read_bytes(), git("show", f"{rev}:{path}")
            found = compare_bytes(path, ours, theirs, tol)
            if path.startswith(CODE_LISTINGS) and found:  # another code: a fact about the tree, not about the results
                found = [Difference(path, "listing", "this tree's code differs from the published one's", breaks=False)]
            counts["identical" if ours == theirs else "differ" if any(d.breaks for d in found) else
                   "drawn" if found else "agree"] += 1
            differences += found
    return counts, differences


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", default="HEAD", help="the commit whose outputs are the published ones (HEAD)")
    parser.add_argument("--rtol", type=float, default=Tolerance.rtol, help="relative tolerance on floats")
    parser.add_argument("--atol", type=float, default=Tolerance.atol, help="absolute tolerance on floats")
    args = parser.parse_args(argv)
    tol = Tolerance(args.rtol, args.atol)
    counts, differences = compare(ROOT, args.against, tol)
    breaking = [d for d in differences if d.breaks]
    for d in differences:
        print(f"{'DIFFERS' if d.breaks else 'note   '}  {d.path}  {d.where}: {d.what}")
    print(f"{counts['files']} output files and folders: {counts['identical']} identical, {counts['agree']} agree within rtol "
          f"{tol.rtol:g} / atol {tol.atol:g}, {counts['drawn']} other bytes in a figure, page, weights, code listing or "
          f"data drawn from the compared tables, {counts['differ'] + len([d for d in breaking if d.where == 'file'])} differ")
    if breaking:
        print(f"verify: {len(breaking)} differences change a published conclusion (listed above)")
        return 1
    print(f"verify: the reproduction agrees with the outputs published at {args.against}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
