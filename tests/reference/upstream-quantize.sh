#!/usr/bin/env bash
# Upstream llama.cpp's quantizer on the files tst_quantize quantizes: for each case below, the
# source file (committed, or written by ember-synth-model from the arguments given), quantized by
# upstream's own llama-quantize (build-upstream-tools.sh), its tensors' types and SHA-256 digests
# recorded in tests/data/upstream-quantize.json. tst_quantize then requires ember-quantize's file
# of each source to have those types and bytes. CI does not run this; the test reads its output.
#
#   tests/reference/upstream-quantize.sh BUILD_DIR [WORK_DIR]   (default /tmp/upstream-tools)
set -euo pipefail
synth=$(cd "$1" && pwd)/bin/ember-synth-model
cd "$(dirname "$0")"
work=${2:-/tmp/upstream-tools}
./build-upstream-tools.sh "$work" quantize
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "TYPE|SOURCE": SOURCE is a file under tests/data, or "synth ARGS" for ember-synth-model --type F16.
small="--n-vocab 512"
cases=(
    "Q4_1|tiny-relu-llama/model.dense.gguf"
    "Q5_0|tiny-relu-llama/model.dense.gguf"
    "Q5_1|tiny-relu-llama/model.dense.gguf"
    "Q8_0|tiny-relu-llama/model.dense.gguf"
    "Q4_K_S|tiny-relu-llama/model.dense.gguf"
    "Q5_K_S|tiny-relu-llama/model.dense.gguf"
    "Q5_K_M|tiny-relu-llama/model.dense.gguf"
    "Q6_K|tiny-relu-llama/model.dense.gguf"
    # Grouped-query attention, a tied LM head, rows of 320 (no 256-block fits: the fallbacks), 8 layers.
    "Q4_K_M|synth --llama3 --n-layer 8 --n-embd 320 --n-head 5 --n-head-kv 1 --n-ff 768 $small"
    "Q5_K_S|synth --llama3 --n-layer 8 --n-embd 320 --n-head 5 --n-head-kv 1 --n-ff 768 $small"
    # Fused QKV and gate-up matrices.
    "Q4_K_M|synth --arch phi3 --n-layer 4 --n-embd 256 --n-head 4 --n-head-kv 4 --n-ff 512 $small"
    # Eight experts: attn_k and attn_v to Q8_0, attn_output to Q5_K, the experts' layers by name.
    "Q4_K_M|synth --arch mixtral --experts 8 --experts-used 2 --n-layer 4 --n-embd 256 --n-head 4 --n-head-kv 2 --n-ff 256 $small"
)
{
    echo '{"cases": ['
    first=1
    for case in "${cases[@]}"; do
        type=${case%%|*}
        source=${case#*|}
        if [[ $source == synth* ]]; then
            file=$tmp/source.gguf
            # shellcheck disable=SC2086
            "$synth" -o "$file" --type F16 ${source#synth } 2>/dev/null
            source_json="\"synth\": \"${source#synth }\""
        else
            file=../data/$source
            source_json="\"file\": \"$source\""
        fi
        "$work/bin/llama-quantize" "$file" "$tmp/out.gguf" "$type" >/dev/null 2>&1
        [ $first = 1 ] || echo ','
        first=0
        printf '{%s, "type": "%s", "source_sha256": "%s",\n "tensors": %s}' "$source_json" "$type" \
            "$(sha256sum "$file" | cut -d' ' -f1)" "$(python3 gguf_tensor_digests.py "$tmp/out.gguf")"
    done
    echo ']}'
} > ../data/upstream-quantize.json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["cases"]), "cases written to", sys.argv[1])' ../data/upstream-quantize.json
