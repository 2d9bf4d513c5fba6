"""The catalog: every built-in name a config may choose, with the import path of what it names and the facts
the configuration checks (modality, levels), in one place and without importing any implementation.

Each registry here is the one its domain resolves names through (`pipeline.perturb.registry`,
`pipeline.search.registry`, ...); `tests/plugins/test_catalog.py` checks every entry's facts against the object
its path names. A kind (`model.kind`, `benchmark.dataset.kind`, ...) names the typed config of its node
(`pipeline.config`); the implementation a node builds is its `_target_` (`pipeline.benchmark.plugin_code`).
"""
from __future__ import annotations

from pipeline.plugins.registry import Entry, Registry

VISION, TEXT, CODE = "vision", "text", "code"
MODALITIES = (VISION, TEXT, CODE)

_IMAGENET_C = ("gaussian_noise", "shot_noise", "impulse_noise", "defocus_blur", "glass_blur", "motion_blur", "zoom_blur", "snow",
               "frost", "fog", "brightness", "contrast", "elastic_transform", "pixelate", "jpeg_compression", "speckle_noise",
               "gaussian_blur", "spatter", "saturate")
_TEXT_FAMILIES = ("synonym", "typo", "contraction", "punctuation")     # TestNav §4.1
_CODE_FAMILIES = ("butterfingers", "char_case", "whitespace", "newline")  # ReCode, the paper's fixed order
MAX_LEVEL = 5  # every built-in family: levels 0..5, 0 the identity

PERTURBATIONS: Registry = Registry("perturbation", {
    **{n: Entry("pipeline.perturb.registry:imagenet_c_family", {"modality": VISION, "max_level": MAX_LEVEL}, (n,)) for n in _IMAGENET_C},
    **{n: Entry("pipeline.perturb.registry:text_family", {"modality": TEXT, "max_level": MAX_LEVEL}, (n,)) for n in _TEXT_FAMILIES},
    **{n: Entry("pipeline.perturb.registry:code_family", {"modality": CODE, "max_level": MAX_LEVEL}, (n,)) for n in _CODE_FAMILIES},
})
CONTINUOUS_FAMILIES = ("speckle_noise", "glass_blur", "brightness", "pixelate")  # `severity` fuzz adapter (continuous levels)
MAX_CONTINUOUS_SEVERITY = 5.0

FIDELITY: Registry = Registry("fidelity metric", {
    "ssim": Entry("pipeline.benchmark.build:ssim_metric", {"modality": VISION}),
    "kid": Entry("pipeline.benchmark.build:kid_metric", {"modality": VISION}),
    "chrf": Entry("pipeline.benchmark.build:chrf_metric", {"modality": TEXT}),
    "bert_f1": Entry("pipeline.benchmark.build:bert_f1_metric", {"modality": TEXT}),
    "chrf_code": Entry("pipeline.benchmark.build:chrf_code_metric", {"modality": CODE}),
    "bert_f1_code": Entry("pipeline.benchmark.build:bert_f1_code_metric", {"modality": CODE}),
})

TASK_METRICS: Registry = Registry("task metric", {
    "accuracy": "pipeline.benchmark.problem:accuracy",
    "robust_pass": Entry("pipeline.code.robust_pass:robust_pass_at_1", {"modality": CODE}),
})

_ADEQUACY_LABELS = {"nac": "NAC", "snac": "SNAC", "kmnc": "KMNC", "tknc": "TKNC", "deepgini": "DeepGini", "lsa": "LSA", "dsa": "DSA"}
ADEQUACY: Registry = Registry("adequacy metric", {
    n: Entry(f"pipeline.adequacy.registry:{n}", {"label": label}) for n, label in _ADEQUACY_LABELS.items()})

# search methods: `population` = starts from μ random proposals (needs budget ≥ μ); guided ones search an adequacy column
SEARCH_METHODS: Registry = Registry("search method", {
    "testnav": Entry("pipeline.search.methods.evolution:TestNav", {"population": True}),
    "greedy": Entry("pipeline.search.methods.greedy:GreedySearch", {"population": False}),
    "ga": Entry("pipeline.search.methods.evolution:GeneticAlgorithm", {"population": True}),
    "random": Entry("pipeline.search.methods.random_search:RandomSearch", {"population": False}),
    "delta_only": Entry("pipeline.search.methods.evolution:DeltaOnly", {"population": True}),
    "rho_only": Entry("pipeline.search.methods.evolution:RhoOnly", {"population": True}),
    "coverage": Entry("pipeline.search.methods.coverage:CoverageSearch", {"population": False}),
    "pnd": Entry("pipeline.search.methods.pnd:ParetoProbability", {"population": False}),
    "optuna_nsga2": Entry("pipeline.search.methods.optuna_samplers:OptunaNSGA2", {"population": False}),
    "optuna_tpe": Entry("pipeline.search.methods.optuna_samplers:OptunaTPE", {"population": False}),
    "optuna_gp": Entry("pipeline.search.methods.optuna_samplers:OptunaGP", {"population": False}),
    "botorch_qlognehvi": Entry("pipeline.search.methods.botorch_ehvi:BoTorchQLogNEHVI", {"population": False}),
    "epal": Entry("pipeline.search.methods.epal:EpsilonPAL", {"population": False}),
    "testnav_lattice": Entry("pipeline.search.studies.ablations:TestNavLatticeStart", {"population": True}),
    "pnd_uniform": Entry("pipeline.search.studies.ablations:UniformStartPND", {"population": False}),
    **{n: Entry("pipeline.search.methods.guided:guided_method", {"population": True}, (n,)) for n in _ADEQUACY_LABELS},
})
SELECTIONS = ("dominance", "rank_crowding")  # NSGA-II parent selection (`pipeline.search.methods.variation.TOURNAMENTS`)

FUZZ_ADAPTERS: Registry = Registry("fuzz adapter", {
    "geometric": "pipeline.fuzz.adapters.geometric:geometric_adapter",
    "weights": "pipeline.fuzz.adapters.weights:weights_adapter",
    "severity": "pipeline.fuzz.adapters.severity:severity_adapter",
})
FRONTIER_SCOPES = ("pareto", "all", "none")  # `pipeline.fuzz.campaign`: which configurations stage 6 perturbs

ZOO_KINDS: Registry = Registry("zoo model kind", {
    "cnn": Entry("pipeline.models.zoo:CNNModel", {"modality": VISION, "config": "pipeline.config.paired:ZooCNN"}),
    "mlp": Entry("pipeline.models.zoo:mlp", {"modality": VISION, "config": "pipeline.config.paired:ZooMLP"}),
    "logreg": Entry("pipeline.models.zoo:logreg", {"modality": VISION, "config": "pipeline.config.paired:ZooLogreg"}),
    "forest": Entry("pipeline.models.zoo:forest", {"modality": VISION, "config": "pipeline.config.paired:ZooForest"}),
    "knn": Entry("pipeline.models.zoo:knn", {"modality": VISION, "config": "pipeline.config.paired:ZooKNN"}),
    "minilm_logreg": Entry("pipeline.models.zoo:minilm_logreg", {"modality": TEXT, "config": "pipeline.config.paired:ZooTextLogreg"}),
    "minilm_mlp": Entry("pipeline.models.zoo:minilm_mlp", {"modality": TEXT, "config": "pipeline.config.paired:ZooMiniLMMLP"}),
    "minilm_knn": Entry("pipeline.models.zoo:minilm_knn", {"modality": TEXT, "config": "pipeline.config.paired:ZooMiniLMKNN"}),
    "tfidf_logreg": Entry("pipeline.models.zoo:tfidf_logreg", {"modality": TEXT, "config": "pipeline.config.paired:ZooTextLogreg"}),
    "tfidf_nb": Entry("pipeline.models.zoo:tfidf_nb", {"modality": TEXT, "config": "pipeline.config.paired:ZooTfidfNB"}),
})

# record pools of the paired evaluations (`paired.records.pool`): the images or texts the zoo is trained and recorded on
POOLS: Registry = Registry("record pool", {
    "digits": Entry("pipeline.paired.records.pools:digits_pool", {"modality": VISION}),
    "bbc_news": Entry("pipeline.paired.records.pools:bbc_news_pool", {"modality": TEXT}),
})
RECAPTURE_LIGHTINGS = ("l1", "l5")  # the embedded recapture simulation's lighting levels (`pipeline.perturb.recapture`)
CAMERA_SETTINGS = 27                # ImageNet-ES camera settings per lighting: 3 ISO x 3 shutter x 3 aperture
HUMANEVAL_SIZE = 164                # problems in HumanEval (`pipeline.data.humaneval`)
