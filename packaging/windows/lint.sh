#!/usr/bin/env bash
# Lints Ember's NSIS installer script: cpack fills the template for a stand-in payload and builds the
# installer, then makensis compiles the filled script again with warnings as errors. Needs Debian's
# nsis. Usage: lint.sh [WORK_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(realpath -m "${1:-build/nsis-lint}")
rm -rf "$work"
cmake -S "$here/lint" -B "$work" >/dev/null
(cd "$work" && cpack -G NSIS >/dev/null) || { cat "$work"/_CPack_Packages/*/NSIS/NSISOutput.log; exit 1; }
installer=$(ls "$work"/Ember-*-setup.exe)
makensis -WX -V2 "$work"/_CPack_Packages/*/NSIS/project.nsi
echo "NSIS lint: ok ($(basename "$installer"), $(du -h "$installer" | cut -f1))"
