"""Stage `stage_code`: the listing of the source files each stage runs, `<md5>  <path>` per line, which is that
stage's one code dependency (`pipeline.stages.stage_code`).

    python scripts/stage_code.py   # outputs/stage_code/<stage>.txt, under params.yaml's paths.outputs
"""
from __future__ import annotations

from omegaconf import OmegaConf

from pipeline.stages.layout import PARAMS
from pipeline.stages.stage_code import write_stage_code


def main() -> None:
    written = write_stage_code(OmegaConf.load(PARAMS))
    print(f"listed the code of {len(written)} stages in {written[0].parent}")


if __name__ == "__main__":
    main()
