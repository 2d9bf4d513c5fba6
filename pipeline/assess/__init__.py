"""A user's own run: a model and a data set to a page of what breaks it (`assess`, `scripts/assess.py`); and a
comparison of two models on the same perturbed inputs (`compare`, `scripts/assess.py model@baseline=<model>`)."""
from pipeline.assess.assess import Settings, assess, execute
from pipeline.assess.compare import ComparisonResult, compare, execute_comparison
from pipeline.assess.gate import assert_no_regression
from pipeline.assess.result import AssessResult
from pipeline.assess.run import Run, run_from_objects, run_from_spec

__all__ = ["AssessResult", "ComparisonResult", "Run", "Settings", "assert_no_regression", "assess", "compare", "execute",
           "execute_comparison", "run_from_objects", "run_from_spec"]
