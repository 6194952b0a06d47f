#!/usr/bin/env python3
"""Every function of the C API has a Fortran binding in fortran/partile.f90
(a bind(C, name="partile_...") interface, direct or behind a wrapper that
returns Fortran strings), except those of the headers the README names as
C only: mma.h (the tile interface) and timing.h. A new C function without a
binding fails this test.
Usage: test_fortran_coverage.py SOURCE_ROOT"""
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from public_api import declared_functions  # noqa: E402

C_ONLY_HEADERS = {"mma.h", "timing.h"}

root = pathlib.Path(sys.argv[1])
declared = declared_functions(root)
bound = set(re.findall(r'name="(partile_\w+)"', (root / "fortran" / "partile.f90").read_text()))

missing = sorted(f for f, h in declared.items() if h not in C_ONLY_HEADERS and f not in bound)
stale = sorted(bound - set(declared))
print(f"{len(declared)} C functions, {len(bound)} bound in Fortran, "
      f"{sum(h in C_ONLY_HEADERS for h in declared.values())} C only")
for f in missing:
    print(f"FAIL: {f} ({declared[f]}) has no Fortran binding")
for f in stale:
    print(f"FAIL: fortran/partile.f90 binds {f}, which no header declares")
sys.exit(1 if missing or stale or len(declared) < 30 else 0)
