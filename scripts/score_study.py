"""Produce (or extend) the study's committed score tables in data/scores/.

Resumable: interrupt it at any time and run the same command again; finished rows are never recomputed.
This script is ``allocbias score`` under the name that the committed tables' provenance records: the two take the
same arguments and run the same code (``allocbias.cli``); ``allocbias score --help`` lists the options.

Examples
--------
    .venv/bin/python scripts/score_study.py resume_pointwise --systems smollm2-fp32-paper --names-per-group 10
    .venv/bin/python scripts/score_study.py resume_pairwise --systems smollm2-fp32-paper --rounds 30
    .venv/bin/python scripts/score_study.py resume_pairwise --systems gemma3-fp32-paper --rounds 2 \
        --groups "Male White" "Female White" "Male Black" "Female Black"
    .venv/bin/python scripts/score_study.py hiring_bloomberg --systems smollm2-fp32-paper --orderings 4
    .venv/bin/python scripts/score_study.py essay_pointwise --systems smollm2-fp32-paper   (the demo essays)
    .venv/bin/python scripts/score_study.py ellipse_pointwise --systems smollm2-fp32-paper gemma3-fp32-paper \
        --essay-sample study                       (1,000 real ELLIPSE essays, one system after the other)
    python scripts/score_study.py resume_pairwise --systems smollm2-fp32-paper --rounds 30 \
        --device cuda --engine-batch-size 64          (on a machine with a GPU; provenance records it)
"""

from __future__ import annotations

import sys

from allocbias.cli import main

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:], prog="python scripts/score_study.py"))
