"""What the paired stages (bounds, policies, screening) read: the record table of `paired.source`. Apart
from `paths`, whose path functions every stage imports, so that only these stages depend on the paired code."""
from __future__ import annotations

import pandas as pd

from pipeline.paired.records import expected_conditions, read_records, validate_records_cells
from pipeline.stages.layout import records_path


def read_validated_records(cfg) -> pd.DataFrame:
    """The record table of `paired.source`, validated, not trusted: every row, and every (model,
    condition) cell the config names present."""
    rec = cfg.paired.records
    return validate_records_cells(read_records(records_path(cfg)), [m.name for m in rec.models],
                                  expected_conditions(list(rec.corruptions), list(rec.severities)), str(records_path(cfg)))
