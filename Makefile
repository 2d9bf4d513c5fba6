# Two commands do all the set-up: `make repro` (the pipeline on the embedded default) and `make test`.
VENV := .venv
BIN := $(abspath $(VENV))/bin
export PATH := $(BIN):$(PATH)
STAMP := $(VENV)/.installed

.PHONY: env params repro test test-slow figures benchmarks clean-env dvc.yaml lock

WORDNET := /usr/share/wordnet/index.sense

$(STAMP): pyproject.toml requirements.lock
	test -x $(BIN)/python || python3 -m venv $(VENV)
	$(BIN)/pip install -q -r requirements.lock
	$(BIN)/pip install -q --no-deps -e .
	touch $(STAMP)

$(WORDNET):  ## WordNet 3.0 for the text synonym family (Debian packages; needs root)
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wordnet-base wordnet-sense-index

env: $(STAMP) $(WORDNET)

lock: ## re-resolve pyproject.toml's dependencies in a scratch venv and pin every version in requirements.lock
	rm -rf .lock-venv && python3 -m venv .lock-venv && .lock-venv/bin/pip install -q -e '.[dev]'
	.lock-venv/bin/pip freeze --exclude-editable | grep -v '^-e' > requirements.lock && rm -rf .lock-venv

params: env  ## recompose params.yaml from conf/ (after editing conf/)
	python scripts/compose_params.py

dvc.yaml: env scripts/stages.py  ## regenerate dvc.yaml from the stage table (after adding a stage or an import)
	python scripts/stages.py

repro: env  ## run the whole pipeline (dvc repro) on params.yaml
	dvc repro

test: env  ## the fast test tier (what CI runs)
	python -m pytest -q -n 2

test-slow: env
	python -m pytest -q -m slow

figures: env  ## re-render every figure from the tables only
	for s in $$(dvc stage list --name-only | grep -E '^figures_'); do dvc repro --force --single-item $$s || exit 1; done

benchmarks: env  ## speed ratios measured in one run each
	for b in benchmarks/bench_*.py; do echo "== $$b"; python $$b || exit 1; done

clean-env:
	rm -rf $(VENV)
