"""The stage entry points, one module per DVC stage (`python scripts/<stage>.py …`): config → one library
call → atomic writes. `_entry` loads the config (`run_stage`), `paths` and `search_paths` say where each
stage reads and writes, `stages` is the stage table that generates dvc.yaml. Importing any of them has no
side effect: a stage pins the numerics when it runs (`_entry.run_stage`)."""
