"""The plumbing every stage script of `scripts/` shares: where each stage reads and writes (`layout`), how it
gets and checks its configuration (`runner`), what the search and paired stages read (`search_inputs`,
`paired_inputs`), and the stage table that generates `dvc.yaml` (`table`). The scripts themselves stay one
library call each."""
