# Sourced by the cross-build checks (windows/mingw-engine-check.sh, macos/arm64-engine-check.sh).
#
#   same_greedy_text LABEL REFERENCE_CLI MODEL PROMPT -- COMMAND...
#
# Runs the reference build's ember-cli and COMMAND (another build's ember-cli, with its runner:
# wine, qemu-aarch64) with the same arguments: MODEL, PROMPT, 16 greedy tokens. Exits 1, naming
# LABEL and both texts, when they differ (Windows line ends aside).
same_greedy_text() {
    local label=$1 reference=$2 model=$3 prompt=$4
    shift 5
    local args=(-m "$model" -p "$prompt" -n 16 --temp 0) want got
    want=$("$reference" "${args[@]}" 2>/dev/null)
    got=$("$@" "${args[@]}" 2>/dev/null | tr -d '\r')
    if [ "$got" != "$want" ]; then
        printf '%s differs on %s:\n  reference: %s\n  this build: %s\n' "$label" "$model" "$want" "$got" >&2
        exit 1
    fi
    echo "$label: $model: $got"
}
