"""The causal-LM code model (`pipeline.models.code_llm`) on a tiny randomly initialised GPT-2 built here: greedy
decoding against a hand-written argmax loop, stop sequences, the persistent generation cache, the sandboxed
execution of its completions, and the config errors of `model=codegen_2b_mono` / `qwen_coder_gguf`."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from pipeline.code.assets import code_predictor, generation_cache_path, write_code_assets
from pipeline.data.humaneval import CodeProblem
from pipeline.models.code_llm import CodeLLM, locate_weights, truncate_at_stop
from pipeline.models.generation_cache import GenerationCache, generation_key, model_digest

CORPUS = ["def add(a, b):\n    return a + b\n", "def is_even(n):\n    \"\"\"Whether n is even.\"\"\"\n    return n % 2 == 0\n",
          "for i in range(10):\n    print(i)\n", "class Stack:\n    def push(self, x):\n        self.items.append(x)\n"] * 3
PROMPT = "def square(x):\n    \"\"\"The square of x.\"\"\"\n"


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer GPT-2 with random weights and a byte-level BPE tokenizer trained on a few lines of code."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    folder = tmp_path_factory.mktemp("tiny_lm")
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(CORPUS, trainers.BpeTrainer(vocab_size=300, special_tokens=["<|endoftext|>"],
                                                         initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|endoftext|>")
    eos = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=bpe.get_vocab_size(), n_positions=256, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=eos, eos_token_id=eos)
    GPT2LMHeadModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def argmax_loop(folder: Path, prompt: str, max_new_tokens: int, stops: tuple[str, ...]) -> str:
    """Oracle: greedy decoding written out (full forward pass, argmax of the last logits, append), stopping at
    end-of-sequence or when the decoded completion holds a stop, then cut before the first stop."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok, model = AutoTokenizer.from_pretrained(folder), AutoModelForCausalLM.from_pretrained(folder).eval()
    ids = tok(prompt)["input_ids"]
    new: list[int] = []
    with torch.inference_mode():
        for _ in range(max_new_tokens):
            nxt = int(model(torch.tensor([ids + new])).logits[0, -1].argmax())
            if nxt == tok.eos_token_id:
                break
            new.append(nxt)
            text = tok.decode(new, skip_special_tokens=True)
            if any(s in text for s in stops):
                break
    text = tok.decode(new, skip_special_tokens=True)
    cuts = [text.find(s) for s in stops if s in text]
    return text[: min(cuts)] if cuts else text


def test_truncate_at_stop_cuts_before_the_earliest_stop():
    assert truncate_at_stop("    return x\n\ndef g():\n#", ["\n#", "\ndef "]) == "    return x\n"
    assert truncate_at_stop("    return x\n", ["\ndef "]) == "    return x\n"
    assert truncate_at_stop("abc", []) == "abc"


def test_greedy_generation_is_the_argmax_loop_and_deterministic(tiny_lm: Path):
    a = CodeLLM(tiny_lm, max_new_tokens=12, stop=())
    b = CodeLLM(tiny_lm, max_new_tokens=12, stop=())
    first = a.generate(PROMPT)
    assert first == b.generate(PROMPT) == a.generate(PROMPT) == argmax_loop(tiny_lm, PROMPT, 12, ())
    assert len(first) > 0 and a.tokens == 2 * 12  # ran to max_new_tokens (no stop, no end-of-sequence)


def test_stop_sequences_cut_the_completion_and_end_generation(tiny_lm: Path):
    full = CodeLLM(tiny_lm, max_new_tokens=12, stop=()).generate(PROMPT)
    stop = full[len(full) // 2 : len(full) // 2 + 2]  # two characters from the middle of the uncut completion
    model = CodeLLM(tiny_lm, max_new_tokens=12, stop=(stop,))
    cut = model.generate(PROMPT)
    assert cut == full[: full.find(stop)] == argmax_loop(tiny_lm, PROMPT, 12, (stop,))
    assert stop not in cut and len(cut) < len(full) and model.tokens < 12  # generation stopped early


def test_the_cache_serves_repeats_and_reruns_and_misses_on_a_changed_prompt(tiny_lm: Path, tmp_path: Path):
    path = tmp_path / "generations.sqlite"
    model = CodeLLM(tiny_lm, max_new_tokens=8, cache=path)
    calls: list[str] = []
    generate = model.backend.generate
    model.backend.generate = lambda prompt, *rest: calls.append(prompt) or generate(prompt, *rest)
    out = model.complete([PROMPT, PROMPT, PROMPT])
    assert len(calls) == 1 and out == [out[0]] * 3  # one call: the repeats of a prompt are generated once
    assert model.complete([PROMPT]) == out[:1] and len(calls) == 1 and model.cache.hits == 1
    changed = PROMPT.replace("square", "sqaure")
    assert model.complete([changed, PROMPT])[1] == out[0] and calls == [PROMPT, changed]

    rerun = CodeLLM(tiny_lm, max_new_tokens=8, cache=path)  # a new process would see the same file
    assert rerun.complete([changed, PROMPT]) == [model.generate(changed), out[0]] and rerun.generated == 0
    other = CodeLLM(tiny_lm, max_new_tokens=9, cache=path)  # other decoding settings: another key
    other.complete([PROMPT])
    assert other.generated == 1 and len(GenerationCache(path)) == 3


def test_the_key_names_weights_decoding_and_the_exact_prompt(tiny_lm: Path, tmp_path: Path):
    model = CodeLLM(tiny_lm, max_new_tokens=8)
    assert model.settings["model"] == model_digest(tiny_lm) and model.settings["runtime"] == "transformers"
    assert model.settings["stop"] == list(model.stop) and model.settings["device"] == "cpu"
    key = generation_key(model.settings, PROMPT)
    assert key != generation_key(model.settings, PROMPT + " ") != generation_key({**model.settings, "max_new_tokens": 9}, PROMPT)
    copy = tmp_path / "copy"
    copy.mkdir()
    for f in tiny_lm.iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    assert model_digest(copy) == model_digest(tiny_lm)  # the same weights elsewhere: the same identity
    (copy / "config.json").write_text((copy / "config.json").read_text() + " ")
    assert model_digest(copy) != model_digest(tiny_lm)


def test_completions_are_executed_in_the_sandbox(tiny_lm: Path, tmp_path: Path):
    # The completion is cut at the first newline, so whatever the random model writes lands in the comment
    # that ends the prompt: the program is `return 1` and passes a test that expects 1, fails one that expects 2.
    prompt = "def one():\n    return 1  # "
    passing = CodeProblem("toy/0", prompt, "one", "def check(candidate):\n    assert candidate() == 1\n", "")
    failing = CodeProblem("toy/1", prompt, "one", "def check(candidate):\n    assert candidate() == 2\n", "")
    data = tmp_path / "data" / "toy"
    write_code_assets([passing, failing], [passing, failing], variants=2, timeout_s=10.0, data_dir=data)
    spec = {"kind": "code_llm", "path": str(tiny_lm), "runtime": "transformers", "max_new_tokens": 6, "stop": ["\n"],
            "device": "cpu"}
    predict = code_predictor(spec, data)
    completion = predict.complete([prompt])[0]
    assert completion and "\n" not in completion and "\r" not in completion
    np.testing.assert_array_equal(predict([prompt] * 4), [True, True, False, False])
    assert predict.complete.generated == 1 and predict.cache.runs == 2  # one generation, one sandbox run per problem
    assert generation_cache_path(data) == tmp_path / "data" / "cache" / "generations.sqlite"
    assert len(GenerationCache(generation_cache_path(data))) == 1


def test_missing_or_wrong_weights_are_errors_naming_the_key(tiny_lm: Path, tmp_path: Path):
    with pytest.raises(ValueError, match=r"^model\.path: None — .*CODE_LLM_GGUF, CODEGEN_WEIGHTS"):
        locate_weights(None, "transformers")
    with pytest.raises(FileNotFoundError, match=r"^model\.path: '/nowhere/q\.gguf' — a \.gguf file.*make llm"):
        locate_weights("/nowhere/q.gguf", "llama_cpp")
    with pytest.raises(FileNotFoundError, match=r"model\.path: .* — a \.gguf file for runtime llama_cpp"):
        locate_weights(tiny_lm, "llama_cpp")  # llama.cpp reads GGUF files only
    with pytest.raises(ValueError, match=r"^model\.runtime: 'vllm' — one of transformers, llama_cpp"):
        locate_weights(tiny_lm, "vllm")
    with pytest.raises(ValueError, match=r"max_new_tokens"):
        CodeLLM(tiny_lm, max_new_tokens=0)


def test_the_llm_configs_compose_and_a_missing_path_names_the_environment_variable(monkeypatch, tiny_lm: Path):
    from pipeline.config import ConfigError
    from pipeline.stages.runner import compose_job

    monkeypatch.delenv("CODEGEN_WEIGHTS", raising=False)
    with pytest.raises(ConfigError, match=r"^model\.path: null — .*CODEGEN_WEIGHTS"):
        compose_job(["benchmark=humaneval", "model=codegen_2b_mono"])
    monkeypatch.setenv("CODEGEN_WEIGHTS", str(tiny_lm))
    cfg = compose_job(["benchmark=humaneval", "model=codegen_2b_mono"])
    assert cfg.model.kind == "code_llm" and cfg.model.path == str(tiny_lm) and cfg.model.runtime == "transformers"
    monkeypatch.setenv("CODE_LLM_GGUF", "/models/q.gguf")
    cfg = compose_job(["benchmark=humaneval", "model=qwen_coder_gguf"])
    assert cfg.model.path == "/models/q.gguf" and list(cfg.model.stop) == ["\ndef ", "\nclass ", "\nif __name__", "\nprint(", "\n#"]
    with pytest.raises(ConfigError, match=r"^model\.runtime: 'vllm' — one of transformers, llama_cpp"):
        compose_job(["benchmark=humaneval", "model=qwen_coder_gguf", "model.runtime=vllm"])
    with pytest.raises(ConfigError, match=r"^model\.max_new_tokens: 0 — an integer ≥ 1"):
        compose_job(["benchmark=humaneval", "model=qwen_coder_gguf", "model.max_new_tokens=0"])
