"""The functions of partile's public C API: every partile_* function the
headers of include/partile declare, with the header that declares it (shared
by tests/test_fortran_coverage.py and tests/test_exports.py)."""
import pathlib
import re


def declared_functions(root):
    """{function name: header file name} for the headers under root/include/partile."""
    declared = {}
    for header in sorted((pathlib.Path(root) / "include" / "partile").glob("*.h*")):
        name = header.name.replace(".in", "")
        text = re.sub(r"/\*.*?\*/", "", header.read_text(), flags=re.S)
        for fn in re.findall(r"^[A-Za-z_][\w \*]*?\b(partile_\w+)\s*\(", text, flags=re.M):
            declared.setdefault(fn, name)
    return declared
