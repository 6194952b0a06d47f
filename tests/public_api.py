"""The functions and integer constants of partile's public C API: every
partile_* function the headers of include/partile declare, and every
PARTILE_* enum member or #define'd number, with the header that declares it
(shared by tests/test_fortran_coverage.py and tests/test_exports.py)."""
import pathlib
import re


def _headers(root):
    for header in sorted((pathlib.Path(root) / "include" / "partile").glob("*.h*")):
        yield header.name.replace(".in", ""), re.sub(r"/\*.*?\*/", "", header.read_text(),
                                                      flags=re.S)


def declared_functions(root):
    """{function name: header file name} for the headers under root/include/partile
    (the return type on the name's line or on the line before it)."""
    declared = {}
    for name, text in _headers(root):
        for fn in re.findall(r"^(?:[A-Za-z_][\w \*]*?\b)?(partile_\w+)\s*\(", text, flags=re.M):
            declared.setdefault(fn, name)
    return declared


def declared_constants(root):
    """{constant: (value, header file name)}: enum members with a value and
    #define'd integers (not the version macros, which Meson fills in)."""
    declared = {}
    for name, text in _headers(root):
        pairs = re.findall(r"^\s*(PARTILE_\w+)\s*=\s*(-?\d+)\s*,?\s*$", text, flags=re.M)
        pairs += re.findall(r"^#define\s+(PARTILE_\w+)\s+\(?(-?\d+)\)?\s*$", text, flags=re.M)
        for k, v in pairs:
            declared.setdefault(k, (int(v), name))
    return declared
