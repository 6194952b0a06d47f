#!/usr/bin/env python3
"""libpartile exports exactly the public API: the symbols its dynamic symbol
table defines are the functions include/partile/*.h declare, and
common/exports.map (the linker's version script) lists the same names. An
internal function exported, or a public one missing, fails this test.
Usage: test_exports.py SOURCE_ROOT LIBRARY"""
import pathlib
import re
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from public_api import declared_functions  # noqa: E402

root, library = pathlib.Path(sys.argv[1]), sys.argv[2]
declared = set(declared_functions(root))
text = re.sub(r"/\*.*?\*/", "", (root / "common" / "exports.map").read_text(), flags=re.S)
global_part = text.split("global:")[1].split("local:")[0]
mapped = set(re.findall(r"(\w+)\s*;", global_part))
nm = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True, text=True,
                    check=True)
# lines "address type name": text, data and read-only symbols alike
exported = {line.split()[-1].split("@")[0] for line in nm.stdout.splitlines()
            if len(line.split()) == 3}
print(f"{len(declared)} declared, {len(mapped)} in exports.map, {len(exported)} exported")
fails = [f"FAIL: {f} is declared but not in common/exports.map" for f in sorted(declared - mapped)]
fails += [f"FAIL: common/exports.map lists {f}, which no header declares"
          for f in sorted(mapped - declared)]
fails += [f"FAIL: {f} is declared but not exported" for f in sorted(declared - exported)]
fails += [f"FAIL: {f} is exported but not declared in a public header"
          for f in sorted(exported - declared)]
print("\n".join(fails) if fails else "exports: exactly the public API")
sys.exit(1 if fails or len(declared) < 30 else 0)
