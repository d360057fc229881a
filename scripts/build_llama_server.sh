#!/usr/bin/env bash
# Build and install llama-cpp-python[server] into the project's virtual environment.
#
#   bash scripts/build_llama_server.sh            # uses .venv/bin/python
#   PYTHON=/path/to/python bash scripts/build_llama_server.sh
#
# llama-cpp-python ships on PyPI as a source distribution only: pip compiles llama.cpp
# with CMake (about 15-20 minutes on 2 shared cores). The script is idempotent: it does
# nothing when `import llama_cpp.server` already works with the pinned version.
#
# Why --no-deps: the package's declared dependencies are harmless, but installing it
# without them lets us name every runtime requirement below and makes sure nothing
# pulls torch or CUDA wheels. The server extra needs uvicorn, fastapi, sse-starlette,
# starlette-context, pydantic-settings (and PyYAML for config files).
#
# Why GGML_NATIVE=OFF: a `-march=native` build can crash with "illegal instruction" on a
# different CPU of the same machine kind (CI, a colleague's machine). With NATIVE off,
# ggml enables the portable x86-64 set AVX/AVX2/FMA/F16C explicitly.
set -euo pipefail

cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
LLAMA_CPP_PYTHON_VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.16}"

if [ ! -x "$PYTHON" ]; then
    echo "build_llama_server: $PYTHON not found; create the virtual environment first (make venv)" >&2
    exit 1
fi

installed="$("$PYTHON" - <<'EOF' 2>/dev/null || true
import llama_cpp, llama_cpp.server.app  # noqa: F401  (the server extra must import too)
print(llama_cpp.__version__)
EOF
)"
if [ "$installed" = "$LLAMA_CPP_PYTHON_VERSION" ]; then
    echo "build_llama_server: llama-cpp-python $installed with the server extra is already installed"
    exit 0
fi

echo "build_llama_server: installing runtime requirements (no torch, no CUDA)"
"$PYTHON" -m pip install --quiet \
    "typing-extensions>=4.5" "numpy>=1.20" "diskcache>=5.6.1" "jinja2>=2.11.3" \
    "uvicorn>=0.22.0" "fastapi>=0.100.0" "pydantic-settings>=2.0.1" \
    "sse-starlette>=1.6.1" "starlette-context>=0.3.6,<0.4" "PyYAML>=5.1"

echo "build_llama_server: compiling llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION from source (15-20 min)"
start=$(date +%s)
CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_OPENMP=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF}" \
CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
    "$PYTHON" -m pip install --no-deps --no-binary llama-cpp-python --no-cache-dir \
    "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION"

"$PYTHON" - <<'EOF'
import llama_cpp, llama_cpp.server.app  # noqa: F401
print(f"build_llama_server: llama-cpp-python {llama_cpp.__version__} with the server extra imports")
EOF
echo "build_llama_server: done in $(( $(date +%s) - start )) s"
