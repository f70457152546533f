#!/usr/bin/env bash
# Renders the hicolor PNG sizes from the SVG (needs Debian's librsvg2-bin). The PNGs are committed,
# so builds and CI need no SVG renderer; rerun this after editing the SVG.
set -euo pipefail
cd "$(dirname "$0")"
id=io.github.emberapp.Ember
for size in 16 24 32 48 64 128 256 512; do
    rsvg-convert -w "$size" -h "$size" "$id.svg" -o "$id-$size.png"
done
