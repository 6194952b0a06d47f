#!/usr/bin/env python3
"""Count Meson test results (testlog.json files) into one closing line:
'N passed, N failed, N skipped'. A missing log counts as one failure."""
import json
import sys

PASSED = {"OK", "EXPECTEDFAIL"}
SKIPPED = {"SKIP"}

passed = failed = skipped = 0
for path in sys.argv[1:]:
    try:
        with open(path, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
    except OSError as e:
        print(f"count-tests: {path}: {e}", file=sys.stderr)
        failed += 1
        continue
    for row in rows:
        result = row.get("result", "")
        if result in PASSED:
            passed += 1
        elif result in SKIPPED:
            skipped += 1
        else:
            failed += 1
            print(f"count-tests: {row.get('name')}: {result}", file=sys.stderr)
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed == 0 else 0)
