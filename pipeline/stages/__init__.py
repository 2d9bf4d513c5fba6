"""The plumbing every stage script of `scripts/` shares: where each stage reads and writes (`layout`), how it
gets and checks its configuration (`runner`), what the search and paired stages read (`search_inputs`,
`paired_inputs`), the stage table that generates `dvc.yaml` (`table`), and the listing of the source files each
stage runs, its one code dependency (`stage_code`). The scripts themselves stay one library call each."""
