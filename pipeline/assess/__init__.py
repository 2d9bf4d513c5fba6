"""A user's own run: a model and a data set to a page of what breaks it (`assess`, `scripts/assess.py`)."""
from pipeline.assess.assess import Settings, assess, execute
from pipeline.assess.result import AssessResult
from pipeline.assess.run import Run, run_from_objects, run_from_spec

__all__ = ["AssessResult", "Run", "Settings", "assess", "execute", "run_from_objects", "run_from_spec"]
