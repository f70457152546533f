#!/bin/bash
# The quality cost of activation sparsity on one dense model: calibrates it on CAL_TEXT, scores
# HELD_OUT_TEXT densely (the KL-divergence base), then at each level, and prints one Markdown row
# per level: perplexity, Δppl (%), mean KL divergence from the dense run, same top token (%).
#
#   engine/tools/sparsity-ladder.sh MODEL.gguf CAL_TEXT HELD_OUT_TEXT [extra ember flags...]
#
# BIN (default build/bin) holds the tools; LEVELS (default "0.25 0.4 0.5 0.6 0.7 0.8 0.9");
# CTX (default 256) is the perplexity chunk length. The calibration lands beside the model.
set -euo pipefail
[ $# -ge 3 ] || { sed -n 2,9p "$0"; exit 2; }
model=$1 cal=$2 text=$3
shift 3
bin=${BIN:-build/bin}
ctx=${CTX:-256}
base=$(mktemp)
trap 'rm -f "$base"' EXIT
"$bin/ember-calibrate" -m "$model" -f "$cal" -c "$ctx" "$@" > /dev/null
json() { "$bin/ember-perplexity" -m "$model" -f "$text" -c "$ctx" --kl-divergence-base "$base" --json "$@" 2> /dev/null; }
field() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d.get(sys.argv[2], ''))" "$1" "$2"; }
dense=$(json "$@")
printf '| level | ppl | Δppl | mean KLD | same top |\n|---:|---:|---:|---:|---:|\n'
printf '| dense | %.3f | — | — | — |\n' "$(field "$dense" ppl)"
for s in ${LEVELS:-0.25 0.4 0.5 0.6 0.7 0.8 0.9}; do
    r=$(json --kl-divergence --activation-sparsity "$s" "$@")
    python3 - "$r" "$s" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
print("| %d %% | %.3f | %+.2f %% | %.4f | %.1f %% |" % (round(float(sys.argv[2]) * 100), d["ppl"],
      100 * d["delta_ppl"] / d["ppl_base"], d["mean_kld"], d["same_top_percent"]))
PY
done
