# Two commands do all the set-up: `make repro` (the pipeline on the embedded default) and `make test`.
VENV := .venv
BIN := $(abspath $(VENV))/bin
export PATH := $(BIN):$(PATH)
STAMP := $(VENV)/.installed

.PHONY: env params repro test test-slow figures benchmarks clean-env

$(STAMP): pyproject.toml
	test -x $(BIN)/python || python3 -m venv $(VENV)
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

env: $(STAMP)

params: env  ## recompose params.yaml from conf/ (after editing conf/)
	python scripts/compose_params.py

repro: env  ## run the whole pipeline (dvc repro) on params.yaml
	dvc repro

test: env  ## the fast test tier (what CI runs)
	python -m pytest -q -n 2

test-slow: env
	python -m pytest -q -m slow

figures: env  ## re-render every figure from the tables only
	python scripts/plot_groundtruth.py
	python scripts/plot_recall.py
	python scripts/plot_paired.py
	for a in geometric weights severity; do python scripts/plot_fuzz.py --params fuzz.adapter=$$a || exit 1; done

benchmarks: env  ## speed ratios measured in one run each
	for b in benchmarks/bench_*.py; do echo "== $$b"; python $$b || exit 1; done

clean-env:
	rm -rf $(VENV)
