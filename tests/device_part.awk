# The device part of a backends/gpu .inc file, for a CPU emulation test to
# compile as host C++ (tests/emulate_line_deposit.cc): every line before the
# file's "host side" marker, with the #if blocks still open there (its
# include guard) closed. No marker is an error, so that a renamed or missing
# marker fails the build instead of emulating the wrong code. Dynamic shared
# memory (`extern __shared__`) becomes EMU_EXTERN_SHARED, so that the test
# can make __shared__ `static` for the static arrays of the same file.
FNR == 1 { printf "#line 1 \"%s\"\n", FILENAME }
/^\/\* [=-]+ host side [=-]+ \*\/$/ { found = 1; exit }
/^[ \t]*#[ \t]*if/ { depth++ }
/^[ \t]*#[ \t]*endif/ { depth-- }
{ gsub(/extern[ \t]+__shared__/, "EMU_EXTERN_SHARED"); print }
END {
    if (!found) {
        print FILENAME ": no host-side marker" > "/dev/stderr"
        exit 1
    }
    for (; depth > 0; depth--)
        print "#endif"
}
