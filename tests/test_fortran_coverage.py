#!/usr/bin/env python3
"""Every function of the C API has a public Fortran binding in
fortran/partile.f90 (a bind(C, name="partile_...") interface under the same
name, direct or behind a wrapper that returns Fortran strings), and every
integer constant of the C headers (enum members and #define'd numbers) is a
Fortran parameter of the same name and value, except those of the headers
the README names as C only: mma.h (the tile interface) and timing.h. (The
version macros come from version.h.in, filled in by Meson; Fortran has
partile_version() instead.) A new C function or constant without its
Fortran twin, or a value that differs, fails this test.
Usage: test_fortran_coverage.py SOURCE_ROOT"""
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from public_api import declared_constants, declared_functions  # noqa: E402

C_ONLY_HEADERS = {"mma.h", "timing.h"}

root = pathlib.Path(sys.argv[1])
declared = declared_functions(root)
source = (root / "fortran" / "partile.f90").read_text()
code = re.sub(r"!.*", "", source)  # comments out
public = set()
for names in re.findall(r"public\s*::(.*?)(?<!&)\n", re.sub(r"&\s*\n\s*", " ", code)):
    public.update(n.strip() for n in names.split(","))
bound = set(re.findall(r'name="(partile_\w+)"', code))
parameters = {k: int(v) for k, v in re.findall(r"\b(PARTILE_\w+)\s*=\s*(-?\d+)", code)}

missing = sorted(f for f, h in declared.items() if h not in C_ONLY_HEADERS and f not in bound)
private = sorted(f for f, h in declared.items()
                 if h not in C_ONLY_HEADERS and f in bound and f not in public)
stale = sorted(bound - set(declared))
constants = {k: (v, h) for k, (v, h) in declared_constants(root).items() if h not in C_ONLY_HEADERS}
absent = sorted(k for k in constants if k not in parameters)
differ = sorted(k for k in constants if k in parameters and parameters[k] != constants[k][0])
print(f"{len(declared)} C functions, {len(bound)} bound in Fortran, "
      f"{sum(h in C_ONLY_HEADERS for h in declared.values())} C only; "
      f"{len(constants)} C constants, {len(constants) - len(absent) - len(differ)} in Fortran")
for f in missing:
    print(f"FAIL: {f} ({declared[f]}) has no Fortran binding")
for f in private:
    print(f"FAIL: {f} ({declared[f]}) is bound but not public in fortran/partile.f90")
for f in stale:
    print(f"FAIL: fortran/partile.f90 binds {f}, which no header declares")
for k in absent:
    print(f"FAIL: {k} = {constants[k][0]} ({constants[k][1]}) is no Fortran parameter")
for k in differ:
    print(f"FAIL: {k} is {constants[k][0]} in {constants[k][1]}, {parameters[k]} in Fortran")
sys.exit(1 if missing or private or stale or absent or differ or len(declared) < 30
         or len(constants) < 40 else 0)
