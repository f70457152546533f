#!/usr/bin/env bash
# ember-hub against curl on the same 1 GiB file over loopback, alternated round by round, with
# medians (BENCHMARKS.md, "Downloader"). The Hub is the tests' stand-in
# (tests/downloader/hub_server.py): the file is a sparse GGUF served as an LFS file, a 302 from
# the Hub port to the "CDN" port, both clients following it. Both write to DEST (default: a
# folder under /var/tmp, on disk); curl also writes to /dev/null, the ceiling of the transfer.
#
#   downloader/tools/bench-download.sh [ROUNDS [DEST [BUILD_DIR]]]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-9}
dest_root=${2:-/var/tmp}
build=${3:-build}
hub=$(mktemp -d)
dest=$(mktemp -d "$dest_root/ember-bench-dl.XXXXXX")
server=
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null || true
    rm -rf "$hub" "$dest"
}
trap cleanup EXIT

mkdir -p "$hub/files/Bench/Sparse-1G"
truncate -s 1G "$hub/files/Bench/Sparse-1G/sparse.gguf"
cat >"$hub/config.json" <<'JSON'
{"repos": {"Bench/Sparse-1G": {"sha": "0123456789abcdef0123456789abcdef01234567"}}, "faults": []}
JSON
source tests/downloader/start_hub_server.sh
start_hub_server "$hub"
export HF_ENDPOINT="http://127.0.0.1:$port"
url="$HF_ENDPOINT/Bench/Sparse-1G/resolve/main/sparse.gguf"

# Appends "wall_seconds peak_rss_kib" of one run of the command to the log $1 (GNU time).
measure() { local log=$1; shift; /usr/bin/time -f "%e %M" -a -o "$log" "$@" >/dev/null; }
median() { awk '{print $1}' "$1" | sort -g | awk '{a[NR] = $1} END {m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.2f", m}'; }
peak_mib() { awk '$2 > m {m = $2} END {printf "%.1f", m / 1024}' "$1"; }

# The server hashes the file once on the first request; this fetch pays for that.
"$build/bin/ember-hub" download Bench/Sparse-1G --dest "$dest/warm" >/dev/null

: >"$hub/ember" ; : >"$hub/curl" ; : >"$hub/null"
for r in $(seq "$rounds"); do
    rm -rf "$dest/hub" "$dest/curl.gguf"
    measure "$hub/ember" "$build/bin/ember-hub" download Bench/Sparse-1G --dest "$dest/hub"
    measure "$hub/curl" curl -sSfL -o "$dest/curl.gguf" "$url"
    measure "$hub/null" curl -sSfL -o /dev/null "$url"
    cmp -s "$dest/curl.gguf" "$dest/hub/Bench/Sparse-1G/sparse.gguf" || { echo "round $r: the two files differ" >&2; exit 1; }
    echo "round $r: ember-hub $(tail -1 "$hub/ember" | cut -d' ' -f1) s, curl $(tail -1 "$hub/curl" | cut -d' ' -f1) s," \
         "curl to /dev/null $(tail -1 "$hub/null" | cut -d' ' -f1) s"
done
e=$(median "$hub/ember") c=$(median "$hub/curl") n=$(median "$hub/null")
echo "medians over $rounds rounds, 1 GiB to $(df --output=fstype "$dest" | tail -1) ($dest_root):"
echo "  ember-hub $e s (peak RSS $(peak_mib "$hub/ember") MiB), curl $c s ($(peak_mib "$hub/curl") MiB)," \
     "curl to /dev/null $n s"
echo "  ember-hub's rate is $(echo "100 * $c / $e" | bc -l | xargs printf '%.0f') % of curl's," \
     "$(echo "100 * $n / $e" | bc -l | xargs printf '%.0f') % of curl's to /dev/null"
