# Shared set-up of the CLI test scripts (sourced): checks the partile binary
# argument, finds a python3 with NumPy (exit 77 = Meson's skip otherwise),
# makes a temporary folder, a fail() counter, expect_success() and
# expect_failure().
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
# Under AddressSanitizer a failed allocation returns NULL, as malloc does in
# a release build, so that the tool's out-of-memory messages can be tested
# (ASan aborts on it by default); its warning about that is not a report.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1"
export ASAN_OPTIONS
sanitizer_report() {
    grep -v "WARNING: AddressSanitizer failed to allocate" "$1" | grep -q "Sanitizer\|runtime error"
}

fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# expect_success NAME SUMMARY ARGS...: `partile ARGS` (ARGS starts with the
# command) must succeed and print a line matching SUMMARY on stdout, which
# is left in $tmp/stdout. Returns 1 if the command failed.
expect_success() {
    run_name=$1 summary=$2
    shift 2
    if ! "$partile" "$@" >"$tmp/stdout" 2>"$tmp/stderr"; then
        fail "$run_name: partile $1 failed: $(cat "$tmp/stderr")"
        return 1
    fi
    grep -q -e "$summary" "$tmp/stdout" || fail "$run_name: no summary line"
    return 0
}

# expect_failure CMD OUT NAME WANT PATTERN|- ARGS...: `partile CMD --out OUT
# ARGS` must exit non-zero (with status WANT, or "any"), say "partile CMD:
# ..." on stderr (containing PATTERN unless -) with no sanitizer report, and
# leave OUT absent.
expect_failure() {
    cmd=$1 out=$2 name=$3 want=$4 pattern=$5
    shift 5
    "$partile" "$cmd" --out "$out" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$?
    if [ "$rc" -eq 0 ]; then
        fail "$name: exit status 0, expected failure"
    elif [ "$want" != any ] && [ "$rc" -ne "$want" ]; then
        fail "$name: exit status $rc, expected $want: $(head -n 1 "$tmp/stderr")"
    fi
    if ! grep -q "^partile $cmd: " "$tmp/stderr"; then
        fail "$name: no \"partile $cmd: ...\" message on stderr: $(cat "$tmp/stderr")"
    elif sanitizer_report "$tmp/stderr"; then
        fail "$name: sanitizer report: $(cat "$tmp/stderr")"
    elif [ "$pattern" != - ] && ! grep -q -e "$pattern" "$tmp/stderr"; then
        fail "$name: stderr does not say \"$pattern\": $(cat "$tmp/stderr")"
    else
        echo "ok ($name, exit $rc): $(grep -v "^usage\|^ \|^commands" "$tmp/stderr" | head -n 1)"
    fi
    [ -e "$out" ] && fail "$name: wrote $out ($(ls "$out" 2>/dev/null | tr '\n' ' '))"
}
