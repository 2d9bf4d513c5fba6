"""A causal language model that completes (perturbed) code prompts greedily: the model under test of the code
benchmarks as the paper runs them (TestNav §4.1, benchmark (iii): CodeGen-2B-mono on HumanEval, ReCode's greedy
completion for RP5@1).

The weights are read from a local path, never downloaded: a Hugging Face checkpoint folder (CodeGen-2B-mono or
any causal LM that `AutoModelForCausalLM` loads) or a GGUF file. Two runtimes:

* `transformers`: `AutoModelForCausalLM.from_pretrained(..., local_files_only=True)`, a GGUF file through
  transformers' GGUF support (`gguf_file=`, dequantised to float32: needs the `gguf` and `accelerate` packages).
  Runs on `device` (cpu, cuda, cuda:<n>).
* `llama_cpp`: llama.cpp through `llama-cpp-python` (`make llm` builds it), GGUF files only, on the CPU unless
  the installed build offloads to a GPU. On one core of the 2-core machine it generated Qwen2.5-Coder-0.5B's
  Q4_K_M GGUF at 22 tokens/s against transformers' 6 (same prompts; conf/model/qwen_coder_gguf.yaml), and loads
  it in 1 s against 40 s (transformers dequantises every tensor); 9 of 10 greedy completions were identical.

Completion, as HumanEval and ReCode do it: the raw prompt (no chat template), greedy decoding (the argmax token
at every step), at most `max_new_tokens` new tokens; generation ends at the end-of-sequence token or as soon as
the decoded completion contains a stop sequence, and the completion is cut before the first stop sequence
(`truncate_at_stop`). HumanEval's usual stops ("\\ndef ", "\\nclass ", "\\nif __name__", "\\nprint(", "\\n#")
start at column 0, so they end the function body at the next top-level statement.

Determinism: one prompt per forward pass, never padded beside others (padding changes the shapes of the matrix
products and so the last bits, which can flip an argmax), the model in eval mode; so a completion is a function
of (weights, runtime and its versions, device, threads, decoding settings, prompt). That tuple keys the
persistent `GenerationCache` (`pipeline.models.generation_cache`): a prompt that any earlier run, worker or seed
already completed is answered from the cache, and the prompts of one call are deduplicated first.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pipeline.models.generation_cache import (
    GenerationCache,
    generation_key,
    model_digest,
)

RUNTIMES = ("transformers", "llama_cpp")
HUMANEVAL_STOPS = ("\ndef ", "\nclass ", "\nif __name__", "\nprint(", "\n#")
LLAMA_CONTEXT = 4096  # tokens of prompt + completion that the llama.cpp context holds


def truncate_at_stop(text: str, stops: Sequence[str]) -> str:
    """`text` up to (not including) the earliest occurrence of any stop sequence; all of it if none occurs."""
    cut = min((i for i in (text.find(s) for s in stops if s) if i >= 0), default=len(text))
    return text[:cut]


def locate_weights(path: str | Path | None, runtime: str, key: str = "model.path") -> Path:
    """The local weights `path` names, checked for the runtime: a GGUF file, or (transformers only) a checkpoint
    folder with config.json. Errors name `key`, the value and what is expected."""
    if runtime not in RUNTIMES:
        raise ValueError(f"model.runtime: {runtime!r} — one of {', '.join(RUNTIMES)}")
    if path is None or not str(path).strip():
        raise ValueError(f"{key}: None — a local GGUF file or causal-LM checkpoint folder; set the environment variable "
                         "the model config reads (CODE_LLM_GGUF, CODEGEN_WEIGHTS) or pass model.path=<path>")
    weights = Path(path)
    if weights.is_file() and weights.suffix == ".gguf":
        return weights
    if weights.is_dir() and (weights / "config.json").is_file() and runtime == "transformers":
        return weights
    expected = "a .gguf file" if runtime == "llama_cpp" else "a .gguf file or a folder with config.json (save_pretrained)"
    hint = " (`make llm` writes the Qwen2.5-Coder GGUF to .venv/llm/)" if not weights.exists() else ""
    raise FileNotFoundError(f"{key}: {str(path)!r} — {expected} for runtime {runtime}{hint}")


class _Transformers:
    """Greedy generation with a transformers causal LM (checkpoint folder or GGUF file) on `device`."""

    def __init__(self, weights: Path, device: Any) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

        where, extra = (str(weights.parent), {"gguf_file": weights.name}) if weights.is_file() else (str(weights), {})
        bar = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(where, local_files_only=True, **extra)
            self.model = AutoModelForCausalLM.from_pretrained(where, local_files_only=True, dtype=torch.float32, **extra)
        finally:
            if bar:
                hf_logging.enable_progress_bar()
        self.device = torch.device(device)
        self.model.eval().requires_grad_(False).to(self.device)
        eos = self.model.generation_config.eos_token_id
        self.eos = [int(e) for e in (eos if isinstance(eos, list) else [eos] if eos is not None else [])]
        self.settings = {"runtime": "transformers", "dtype": "float32", "device": str(self.device),
                         "threads": torch.get_num_threads(), "versions": _versions("transformers", "torch", "tokenizers")
                         | (_versions("gguf") if weights.is_file() else {})}

    def generate(self, prompt: str, max_new_tokens: int, stops: Sequence[str]) -> tuple[str, int]:
        import torch
        from transformers import (
            GenerationConfig,
            StoppingCriteria,
            StoppingCriteriaList,
        )

        ids = self.tokenizer(prompt, return_tensors="pt")["input_ids"].to(self.device)
        start, tokenizer = ids.shape[1], self.tokenizer

        class _Stop(StoppingCriteria):  # the decoded completion (prompt excluded) contains a stop sequence
            def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, **kwargs: Any) -> torch.Tensor:
                text = tokenizer.decode(input_ids[0, start:], skip_special_tokens=True)
                return torch.tensor([any(s in text for s in stops)], dtype=torch.bool, device=input_ids.device)

        config = GenerationConfig(max_new_tokens=max_new_tokens, do_sample=False, num_beams=1, eos_token_id=self.eos or None,
                                  pad_token_id=self.eos[0] if self.eos else tokenizer.pad_token_id)
        with torch.inference_mode():
            out = self.model.generate(ids, attention_mask=torch.ones_like(ids), generation_config=config,
                                      stopping_criteria=StoppingCriteriaList([_Stop()]))
        new = out[0, start:]
        return self.tokenizer.decode(new, skip_special_tokens=True), int(new.shape[0])


class _LlamaCpp:
    """Greedy generation with llama.cpp (`llama-cpp-python`) on a GGUF file."""

    def __init__(self, weights: Path, device: Any, threads: int) -> None:
        try:
            import llama_cpp
        except ModuleNotFoundError as error:
            raise ModuleNotFoundError("model.runtime: 'llama_cpp' needs llama-cpp-python: run `make llm`, or set "
                                      "model.runtime=transformers") from error
        device = str(device)
        if device != "cpu" and not llama_cpp.llama_supports_gpu_offload():
            raise ValueError(f"model.device: {device!r} — cpu: the installed llama-cpp-python is built for the CPU "
                             "only (use model.runtime=transformers on a GPU)")
        gpu = {} if device == "cpu" else {"n_gpu_layers": -1, "main_gpu": int(device.partition(":")[2] or 0)}
        self.llm = llama_cpp.Llama(model_path=str(weights), n_ctx=LLAMA_CONTEXT, n_threads=threads, n_threads_batch=threads,
                                   seed=0, verbose=False, **gpu)
        # llama.cpp is compiled for the building CPU (its kernels, and so its last bits, follow the instruction set)
        self.settings = {"runtime": "llama_cpp", "device": device, "threads": threads, "context": LLAMA_CONTEXT,
                         "versions": _versions("llama_cpp"), "system": llama_cpp.llama_print_system_info().decode().strip()}

    def generate(self, prompt: str, max_new_tokens: int, stops: Sequence[str]) -> tuple[str, int]:
        self.llm.reset()  # evaluate every prompt from scratch: no prefix reuse from the previous prompt's state
        out = self.llm.create_completion(prompt, max_tokens=max_new_tokens, temperature=0.0, top_k=1, stop=list(stops))
        return out["choices"][0]["text"], int(out["usage"]["completion_tokens"])


def _versions(*packages: str) -> dict[str, str]:
    from importlib.metadata import version

    names = {"llama_cpp": "llama-cpp-python"}
    return {p: version(names.get(p, p)) for p in packages}


class CodeLLM:
    """`complete(prompts) -> completions`: the greedy completion of each prompt, from `cache` when it holds it.

    path: GGUF file or checkpoint folder; runtime: transformers or llama_cpp; device: torch device or its name;
    threads: the llama.cpp runtime's threads (transformers uses torch's setting; default: torch's thread count);
    cache: a `GenerationCache` or its file path (None = no persistent cache). `generated` counts real
    generations, `tokens` and `seconds_generating` their new tokens and time."""

    def __init__(self, path: str | Path | None, *, runtime: str = "transformers", max_new_tokens: int = 256,
                 stop: Sequence[str] = HUMANEVAL_STOPS, device: Any = "cpu", threads: int | None = None,
                 cache: GenerationCache | str | Path | None = None) -> None:
        import torch

        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
            raise ValueError(f"model.max_new_tokens: {max_new_tokens!r} — an integer ≥ 1")
        self.stop = tuple(str(s) for s in stop)
        if any(not s for s in self.stop):
            raise ValueError(f"model.stop: {list(stop)!r} — non-empty strings")
        self.weights = locate_weights(path, runtime)
        threads = torch.get_num_threads() if threads is None else int(threads)
        self.backend = _Transformers(self.weights, device) if runtime == "transformers" else _LlamaCpp(self.weights, device, threads)
        self.max_new_tokens = max_new_tokens
        self.settings = {**self.backend.settings, "model": model_digest(self.weights), "decoding": "greedy",
                         "max_new_tokens": max_new_tokens, "stop": list(self.stop)}
        self.cache = cache if isinstance(cache, GenerationCache) or cache is None else GenerationCache(cache)
        self.generated = 0
        self.tokens = 0
        self.seconds_generating = 0.0

    def generate(self, prompt: str) -> str:
        """One greedy completion of `prompt`, generated now (not from the cache), cut before the first stop."""
        return self._generate(prompt)[0]

    def _generate(self, prompt: str) -> tuple[str, int]:
        t0 = time.perf_counter()
        text, n = self.backend.generate(prompt, self.max_new_tokens, self.stop)
        self.seconds_generating += time.perf_counter() - t0
        self.generated += 1
        self.tokens += n
        return truncate_at_stop(text, self.stop), n

    def complete(self, prompts: Sequence[str]) -> list[str]:
        """One completion per prompt, in order; each distinct prompt generated at most once, ever (with a cache)."""
        done: dict[str, str] = {}
        for prompt in prompts:
            if prompt in done:
                continue
            key = generation_key(self.settings, prompt)
            found = self.cache.get(key) if self.cache is not None else None
            if found is None:
                t0 = time.perf_counter()
                found, n = self._generate(prompt)
                if self.cache is not None:
                    self.cache.put(key, prompt, found, n, time.perf_counter() - t0, self.settings)
            done[prompt] = found
        return [done[p] for p in prompts]

    def __call__(self, prompts: Sequence[str]) -> list[str]:
        return self.complete(prompts)
