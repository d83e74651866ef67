#!/bin/sh
# Installs the sommelier package (and its dependencies) with the python on PATH; EXTRAS names
# optional extras ("vision": photos of labels, about 150 MB more).
# The Dockerfile runs it at build time; tests run it as plain shell into a fresh venv.
set -eu
python -m pip install --quiet "${1:-.}${EXTRAS:+[$EXTRAS]}"
