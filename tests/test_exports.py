#!/usr/bin/env python3
"""libpartile exports exactly the public API: the symbols its dynamic symbol
table defines are those the linker's version script (exports.map, made from
common/exports.map.in) lists, and those are the functions include/partile/*.h
declare, plus at most the test entry points the map's comment names, each
declared in backends/gpu/particles_entry.h. An internal function exported,
or a public one missing, fails this test.
Usage: test_exports.py SOURCE_ROOT LIBRARY EXPORTS_MAP"""
import pathlib
import re
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from public_api import declared_functions  # noqa: E402

root, library = pathlib.Path(sys.argv[1]), sys.argv[2]
declared = set(declared_functions(root))
text = re.sub(r"/\*.*?\*/", "", pathlib.Path(sys.argv[3]).read_text(), flags=re.S)
global_part = text.split("global:")[1].split("local:")[0]
mapped = set(re.findall(r"(\w+)\s*;", global_part))
nm = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True, text=True,
                    check=True)
# lines "address type name": text, data and read-only symbols alike
exported = {line.split()[-1].split("@")[0] for line in nm.stdout.splitlines()
            if len(line.split()) == 3}
# the test entry points: PARTILE_GPU_ENTRY(name) of particles_entry.h, for CUDA
entries = {"partile_cuda_" + e for e in re.findall(
    r"PARTILE_GPU_ENTRY\((\w+)\)", (root / "backends" / "gpu" / "particles_entry.h").read_text())}
test_entries = {"partile_cuda_mass_apply_matfree", "partile_cuda_workspace_free"}
print(f"{len(declared)} declared, {len(mapped)} in exports.map, {len(exported)} exported")
fails = [f"FAIL: {f} is declared but not in exports.map" for f in sorted(declared - mapped)]
fails += [f"FAIL: exports.map lists {f}, which is neither declared nor a test entry point"
          for f in sorted(mapped - declared - (test_entries & entries))]
fails += [f"FAIL: {f} is in exports.map but not exported" for f in sorted(mapped - exported)]
fails += [f"FAIL: {f} is exported but not in exports.map (not public)"
          for f in sorted(exported - mapped)]
print("\n".join(fails) if fails else "exports: exactly the public API")
sys.exit(1 if fails or len(declared) < 30 else 0)
