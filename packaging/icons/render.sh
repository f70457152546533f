#!/usr/bin/env bash
# Renders the hicolor PNG sizes and the Windows .ico from the SVG (needs librsvg2-bin and python3-pil).
# The results are committed, so builds and CI need neither; rerun this after editing the SVG.
set -euo pipefail
cd "$(dirname "$0")"
id=io.github.emberapp.Ember
for size in 16 24 32 48 64 128 256 512; do
    rsvg-convert -w "$size" -h "$size" "$id.svg" -o "$id-$size.png"
done
# The Windows icon (installer and ember.exe), from the rendered PNGs.
/usr/bin/python3 -c "
from PIL import Image
Image.open('$id-256.png').save('ember.ico', sizes=[(s, s) for s in (16, 24, 32, 48, 64, 128, 256)])"
# The macOS bundle icon.
/usr/bin/python3 -c "
from PIL import Image
Image.open('$id-512.png').save('ember.icns')"
