"""Where every stage reads and writes, as functions of the config. The scripts and the stage table that
generates dvc.yaml (`pipeline.stages.table`) call the same functions, so the two cannot disagree."""
from __future__ import annotations

import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository (the project is installed editable)
CONF_DIR = ROOT / "conf"
PARAMS = ROOT / "params.yaml"


def outputs(cfg) -> Path:
    return ROOT / cfg.paths.outputs


def stage_code_path(cfg, stage: str) -> Path:
    """The listing of the source files `stage` runs, its only code dependency (`pipeline.stages.stage_code`)."""
    return outputs(cfg) / "stage_code" / f"{stage}.txt"


def data_dir(cfg) -> Path:
    """Prepared assets of the configured benchmark (written by `prepare`)."""
    return ROOT / cfg.paths.data / cfg.benchmark.name


def store_path(cfg, stage: str, name: str) -> Path:
    """The resume store of one stage (`pipeline.runtime.store`); outside DVC's outputs, which DVC deletes before a run."""
    return ROOT / cfg.paths.data / "cache" / "store" / stage / f"{name}.sqlite"


def prepare_metrics(cfg) -> Path:
    return outputs(cfg) / "prepare" / f"{cfg.benchmark.name}.json"


def table_path(cfg, benchmark: str | None = None) -> Path:
    """The ground-truth table of `benchmark` (default: the configured one)."""
    return outputs(cfg) / "groundtruth" / f"{benchmark or cfg.benchmark.name}.parquet"


def sibling(path: Path, suffix: str) -> Path:
    """`x.parquet` -> `x<suffix>` (summary and gallery files beside a table)."""
    return path.with_name(path.name.removesuffix(".parquet") + suffix)


def final_paths(cfg) -> dict[str, Path]:
    """The final ground-truth files (`pipeline.benchmark.ground_truth.write_final`): table, summary, P* gallery and the
    per-input outcomes (`pipeline.front.per_input`)."""
    table = table_path(cfg)
    return {"table": table, "summary": sibling(table, ".summary.json"), "gallery": sibling(table, ".gallery.npz"),
            "inputs": sibling(table, ".inputs.parquet")}


def timings_path(cfg, stage: str) -> Path:
    """Wall-clock timings of a stage's run: kept apart from the results, which every run reproduces bit for bit."""
    return outputs(cfg) / "timings" / stage / f"{cfg.benchmark.name}.parquet"


def shard_store(cfg, shard: int, num_shards: int) -> Path:
    suffix = "all" if num_shards == 1 else f"shard-{shard}-of-{num_shards}"
    return store_path(cfg, "groundtruth", f"{cfg.benchmark.name}-{suffix}")


def asset_digest(folder: Path) -> str:
    """Content digest of the prepared assets in `folder`, so a retrained model never resumes stale values."""
    digest = hashlib.sha256()
    for asset in sorted(folder.glob("*")):
        if asset.is_file():
            digest.update(asset.name.encode() + hashlib.sha256(asset.read_bytes()).digest())
    return digest.hexdigest()


def groundtruth_figures(cfg) -> Path:
    return outputs(cfg) / "figures" / "groundtruth" / str(cfg.benchmark.name)


def records_path(cfg) -> Path:
    return outputs(cfg) / "records" / f"{cfg.paired.source}.parquet"


def paired_dir(cfg) -> Path:
    return outputs(cfg) / "paired" / str(cfg.paired.source)


def paired_figures(cfg) -> Path:
    return outputs(cfg) / "figures" / "paired" / str(cfg.paired.source)


def fuzz_dir(cfg, adapter: str) -> Path:
    return outputs(cfg) / "fuzz" / adapter


def fuzz_figures(cfg, adapter: str) -> Path:
    return outputs(cfg) / "figures" / "fuzz" / adapter


def fuzz_assets(cfg, adapter: str) -> Path:
    """The prepared model folder a digits-model adapter reads (`fuzz.adapters.<adapter>.data_dir`)."""
    return ROOT / cfg.paths.data / cfg.fuzz.adapters[adapter].data_dir


def recapture_path(cfg) -> Path:
    """The zoo's records under the real (recapture) conditions of `paired.source` (stage `recapture`)."""
    return outputs(cfg) / "records" / f"{cfg.paired.source}-recapture.parquet"


def screening_dir(cfg) -> Path:
    return paired_dir(cfg) / "screening"


def screening_figures(cfg) -> Path:
    """Figs. 2-4 of the screening (beside, not inside, `paired_figures`: DVC tracks each folder whole)."""
    return outputs(cfg) / "figures" / "screening" / str(cfg.paired.source)


def trace_path(cfg, benchmark: str, metric: str, method: str, seed: int) -> Path:
    return traces_dir(cfg, benchmark) / metric / method / f"seed={seed}.parquet"


def traces_dir(cfg, benchmark: str) -> Path:
    """Every search trace of `benchmark` (`<metric>/<method>/seed=<k>.parquet`)."""
    return outputs(cfg) / "search" / benchmark


def live_path(cfg, benchmark: str, metric: str, method: str, seed: int, what: str) -> Path:
    """`what` is 'trace' or 'ranked' (R, the ranked evaluated configurations)."""
    return outputs(cfg) / "search_live" / benchmark / metric / method / f"seed={seed}.{what}.parquet"


def summary_dir(cfg) -> Path:
    return outputs(cfg) / "search_summary"


def tune_dir(cfg) -> Path:
    return outputs(cfg) / "tune"


def figures_dir(cfg) -> Path:
    return outputs(cfg) / "figures"


def perturb_root(cfg) -> Path:
    """The perturbation stores (`pipeline.perturb.materialize`), one content-addressed folder per clean set,
    perturbation code and seed: shared by every model, shard and run; outside DVC's outputs."""
    return ROOT / cfg.paths.data / "cache" / "perturb"


def perturb_manifest(cfg) -> Path:
    """What the `perturb` stage stored for the configured benchmark (key digest, configurations, bytes)."""
    return outputs(cfg) / "perturb" / f"{cfg.benchmark.name}.json"


def report_dir(cfg) -> Path:
    """The report page `index.html` and the screening priority lists `priority/<source>/<model>.csv` (stage `report`)."""
    return outputs(cfg) / "report"


def report_provenance(cfg) -> Path:
    """The report's run-dependent provenance (commit, machine, time), a script the page loads: beside the timings."""
    return outputs(cfg) / "timings" / "report" / "provenance.js"


def headline_path(cfg) -> Path:
    """The headline metrics of a run (`pipeline.report.headline`): the only DVC metrics file (stage `report`)."""
    return outputs(cfg) / "headline.json"
