import numpy as np
import pytest

from pipeline.figures.fuzz import plot_frontier, plot_omega_distribution, render_fuzz_figures, threshold_table
from pipeline.fuzz import run_campaign
from tests.fuzz.fuzz_models import Tipping

NAMES = ["fragile_up", "fragile_down", "inert"]


@pytest.fixture(scope="module")
def report():
    return run_campaign(NAMES, Tipping(), 3, 40, 0.5, adversarial_tolerance=0.5, n_adversarial_steps=20,
                        operating_point=[1.0, 1.0, 1.0], frontier="none", rng=np.random.default_rng(0))


def test_threshold_table_has_a_row_per_dimension_and_direction(report):
    rows = [line for line in threshold_table(report).splitlines() if line.startswith("| ") and "Dimension" not in line]
    assert len(rows) == 2 * len(NAMES)
    up = next(r for r in rows if r.startswith("| fragile_up | increase |"))
    a = next(x for x in report.adversarial_results if x.dim_name == "fragile_up")
    assert f"{a.threshold_value:.4g}" in up and "| a |" in up
    assert "| inert | increase | 1 | none in range |" in threshold_table(report)


def test_render_writes_pngs_and_skips_a_missing_frontier(report, tmp_path):
    paths = render_fuzz_figures(report, tmp_path)
    assert sorted(p.name for p in paths) == ["omega.png", "sensitivity.png", "thresholds.md"]
    for p in paths[:2]:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="frontier"):
        plot_frontier(report, tmp_path / "frontier.png")


def test_a_report_without_mri_is_named(report, tmp_path):
    from dataclasses import replace

    with pytest.raises(ValueError, match="no MRI"):
        plot_omega_distribution(replace(report, mri_result=None), tmp_path / "omega.png")
