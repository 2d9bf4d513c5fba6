"""Prediction records and their sources (Paired Evaluations, arXiv 2609.35583, Sections 3.1 and 3.3): the record
table (one row per model, condition and image, validated on every read and write), the pools a records
stage predicts, the real recapture sources (simulated or ImageNet-ES from disk), the zoo's real-condition
records with their probe probabilities (§5.3), and the tiers of real conditions (§3.3)."""
from pipeline.paired.records.pools import POOLS, PoolImages, pool_test_set
from pipeline.paired.records.probes import probe_arrays, probe_stacks, probe_table
from pipeline.paired.records.sources import (
    disk_source,
    embedded_source,
    es_pool,
    load_image_folder,
    recapture_source,
)
from pipeline.paired.records.table import (
    CLEAN_COLUMNS,
    COLUMNS,
    KEY_COLUMNS,
    LABEL_COLUMNS,
    PROB_COLUMNS,
    RECORD_COLUMNS,
    SPLITS,
    cells,
    clean_dev_scores,
    expected_conditions,
    read_records,
    records_from_probabilities,
    split_dev_eval,
    validate_records,
    validate_records_cells,
    write_records,
)
from pipeline.paired.records.tiers import condition_summary, condition_tiers
from pipeline.paired.records.zoo import (
    check_clean_agreement,
    check_same_records,
    recaptured_images,
    synthetic_images,
    synthetic_records,
    zoo_records,
)

__all__ = [
    "CLEAN_COLUMNS", "COLUMNS", "KEY_COLUMNS", "LABEL_COLUMNS", "POOLS", "PROB_COLUMNS", "RECORD_COLUMNS", "SPLITS",
    "PoolImages", "cells", "check_clean_agreement", "check_same_records", "clean_dev_scores",
    "condition_summary", "condition_tiers", "disk_source", "embedded_source", "es_pool", "expected_conditions",
    "load_image_folder", "pool_test_set", "probe_arrays", "probe_stacks", "probe_table", "read_records",
    "recapture_source", "recaptured_images", "records_from_probabilities", "split_dev_eval", "synthetic_images",
    "synthetic_records", "validate_records", "validate_records_cells", "write_records", "zoo_records",
]
