#!/usr/bin/env bash
# bundle_wheels.sh: build torchport's wheel and download its pure dependencies into one
# folder, so torchport and the CUDA equivalence check can be used on an offline CUDA machine.
#
# Usage (on a machine with internet access, from anywhere):
#
#     scripts/bundle_wheels.sh [OUT_DIR]          # default OUT_DIR: dist/offline-bundle
#
# Environment knobs: PYTHON (interpreter used to build, default python3), PY_VERSION (target
# Python, default 3.12), PLATFORM (target wheel platform, default manylinux_2_17_x86_64).
#
# OUT_DIR then holds:
#     torchport-*.whl and the wheels of its dependencies (libcst for cp312 x86_64, click, black,
#         pathspec, ... resolved from the wheel's own Requires-Dist), binary wheels only
#     fixtures/                      the fixture pairs (<case>.before.py / <case>.after.py),
#                                    the whole programs of fixtures/programs/ among them
#     scripts/cuda_equivalence.py    the comparison script (standard library + torch only)
#
# Copy OUT_DIR to the CUDA machine (any machine whose PyTorch has CUDA; torch itself is NOT
# bundled, use the one installed there), then:
#
#     python -m venv --system-site-packages venv     # reuse the machine's CUDA torch
#     venv/bin/pip install --no-index --find-links OUT_DIR torchport
#     venv/bin/python OUT_DIR/scripts/cuda_equivalence.py --fixtures OUT_DIR/fixtures
#
# cuda_equivalence.py ends with one line to keep, for example
#     cuda-equivalence: 130 pairs, 130 same, 0 differ, 0 failed; cuda available: True
# and exits 0 when every before/after pair prints the same output, 1 when a pair differs or
# fails, 2 when CUDA is not available. The installed `torchport` command can be used to
# regenerate or check fixtures there (`torchport --check OUT_DIR/fixtures`).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$REPO/dist/offline-bundle}"
PYTHON="${PYTHON:-python3}"
PY_VERSION="${PY_VERSION:-3.12}"
PLATFORM="${PLATFORM:-manylinux_2_17_x86_64}"

mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

echo "building torchport wheel from $REPO"
rm -f "$OUT"/torchport-*.whl
"$PYTHON" -m pip wheel --no-deps --wheel-dir "$OUT" "$REPO"
WHEEL="$(ls "$OUT"/torchport-*.whl | head -n 1)"

# Requirements straight from the wheel metadata (skip extras-only requirements).
mapfile -t REQS < <("$PYTHON" - "$WHEEL" <<'EOF'
import sys, zipfile
from email.parser import Parser
with zipfile.ZipFile(sys.argv[1]) as z:
    meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
    msg = Parser().parsestr(z.read(meta).decode())
for req in msg.get_all("Requires-Dist") or []:
    name, _, marker = req.partition(";")
    if "extra" in marker:
        continue
    print(name.strip())
EOF
)
echo "dependencies: ${REQS[*]:-(none)}"

if [ "${#REQS[@]}" -gt 0 ]; then
  "$PYTHON" -m pip download \
    --only-binary=:all: \
    --python-version "$PY_VERSION" \
    --implementation cp \
    --platform "$PLATFORM" \
    --dest "$OUT" \
    "${REQS[@]}"
fi

if [ -d "$REPO/fixtures" ]; then
  rm -rf "$OUT/fixtures"
  cp -r "$REPO/fixtures" "$OUT/fixtures"
fi
mkdir -p "$OUT/scripts"
cp "$REPO/scripts/cuda_equivalence.py" "$OUT/scripts/"

echo "bundle ready in $OUT:"
ls -1 "$OUT"
