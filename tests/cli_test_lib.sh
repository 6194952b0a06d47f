# Shared set-up of the CLI test scripts (sourced): checks the partile binary
# argument, finds a python3 with NumPy (exit 77 = Meson's skip otherwise),
# makes a temporary folder and a fail() counter.
#   partile, py, tmp, fails — set here; NAME — the caller's name for tmp.
partile=${1:-}
if [ -z "$partile" ] || [ ! -x "$partile" ]; then
    echo "usage: $0 PARTILE_BINARY (got '${partile}')" >&2
    exit 1
fi

py=
for cand in ${PYTHON:-} python3 /usr/bin/python3; do
    if "$cand" -c 'import numpy' >/dev/null 2>&1; then
        py=$cand
        break
    fi
done
if [ -z "$py" ]; then
    echo "SKIP: no python3 with numpy (apt-get install python3-numpy)"
    exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/partile-${NAME:-cli}.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
