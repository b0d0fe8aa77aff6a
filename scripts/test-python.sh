#!/usr/bin/env bash
# The Python package's tests, from nothing: a venv under target/, the package installed from
# the repository with its test extras (pip builds the native module with maturin, in its own
# target directory, target/python: a cargo inside `cargo test` cannot take the workspace's
# build lock), then pytest and the quick-start notebook executed. Run by
# crates/lasthop/tests/python.rs; by hand: scripts/test-python.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
venv=${LASTHOP_PY_VENV:-$root/target/python-venv}
py=${PYTHON:-python3}
start=$(date +%s)
if [ ! -x "$venv/bin/python" ]; then
    "$py" -m venv "$venv"
fi
export CARGO_TARGET_DIR=${LASTHOP_PY_TARGET:-$root/target/python}
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "$root/python[test]"
echo "installed in $(( $(date +%s) - start )) s"
# Not from python/: its lasthop/ (without the native module) would shadow the installed one.
cd "$root/target"
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/python/tests"
echo "pytest done at $(( $(date +%s) - start )) s"
if [ -f "$root/examples/notebooks/quickstart.ipynb" ]; then
    nbout=$root/target/python-notebook
    mkdir -p "$nbout"
    export LASTHOP_NOTEBOOK_OUT=$nbout/quickstart
    (cd "$root/examples/notebooks" && "$venv/bin/python" -m jupyter nbconvert --to notebook --execute \
        --ExecutePreprocessor.timeout=600 --ExecutePreprocessor.kernel_name=python3 \
        --output-dir "$nbout" quickstart.ipynb)
    echo "notebook done at $(( $(date +%s) - start )) s"
fi
