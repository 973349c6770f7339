#!/bin/bash
# Byte-identity check for refactors: two cuport binaries (BASE NEW) port the
# same corpora; ported trees, stdout and every review report must be equal
# (run time and date aside). CORPUS: the folder holding cuda-samples, llm.c
# and cuda_programming checkouts (see README.md here).
# Usage: tests/corpus/identical_outputs.sh OLD_CUPORT NEW_CUPORT
set -u
BASE=$1; NEW=$2; OUT=${IDENT_OUT:-${TMPDIR:-/tmp}/cuport-identical}
rm -rf $OUT; mkdir -p $OUT
run() { # name corpus args...
  local name=$1 src=$2; shift 2
  for which in base new; do
    bin=$BASE; [ $which = new ] && bin=$NEW
    $bin migrate "$src" "$@" --out $OUT/$name-$which/tree --report $OUT/$name-$which/report -q > $OUT/$name-$which.stdout 2> $OUT/$name-$which.stderr
    echo "$name $which exit $?"
  done
  if cmp -s $OUT/$name-base.stdout $OUT/$name-new.stdout; then echo "$name: stdout identical"; else echo "$name: STDOUT DIFFERS"; fi
  if diff -r $OUT/$name-base/tree $OUT/$name-new/tree > $OUT/$name.treediff; then echo "$name: trees identical"; else echo "$name: TREES DIFFER ($(wc -l < $OUT/$name.treediff) lines)"; fi
  for f in report.json summary.md diagnostics.sarif changes.csv unsupported.csv; do
    python3 - "$OUT/$name-base/report/$f" "$OUT/$name-new/report/$f" "$name/$f" <<'PY'
import sys, json, re
a, b, label = sys.argv[1:]
def load(p):
    t = open(p, encoding="utf-8").read()
    if p.endswith(".json"):
        d = json.loads(t); d.get("run", {}).pop("generated_at", None); d.get("run", {}).pop("duration_ms", None)
        return json.dumps(d, sort_keys=True, indent=1)
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "T", t)
try:
    x, y = load(a), load(b)
except FileNotFoundError as e:
    print(f"{label}: missing {e.filename}"); sys.exit()
if x == y: print(f"{label}: identical")
else:
    import difflib
    d = list(difflib.unified_diff(x.splitlines(), y.splitlines(), lineterm="", n=0))
    print(f"{label}: DIFFERS ({len(d)} diff lines)"); print("\n".join(d[:20]))
PY
  done
}
C=${CORPUS:-/work/corpus/src}
run cs-hip $C/cuda-samples --to hip
run llmc-ascend $C/llm.c --to ascend
run llmc-simt $C/llm.c --to ascend --ascend-kernels simt
run llmc-dual $C/llm.c --to ascend,hip --dual
run cp-ggl $C/cuda_programming --to hip --hip-kernel-launch ggl --annotate
run cp-mlu $C/cuda_programming --to mlu
