#!/usr/bin/env bash
# Builds the KDE Syntax-Highlighting adapter (app/chat/ksyntax/) and the highlighter that uses it
# (app/chat/code_highlighter.cpp, as a build that found the library compiles it) with Qt 5 against
# Debian 12's KF5 build of the library — the API it shares with KF6, which the app uses where it is
# found and Debian 12 lacks — with -Werror, and runs their checks (ksyntax_kf5_check.cpp).
# Usage: check_ksyntax_kf5.sh OUT_DIR. Exits 77 (skipped) without libkf5syntaxhighlighting-dev and
# qtbase5-dev.
set -euo pipefail
out=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
inc=/usr/include/KF5/KSyntaxHighlighting
if [ ! -d "$inc" ] || ! pkg-config --exists Qt5Gui; then
    echo "skipped: needs libkf5syntaxhighlighting-dev and qtbase5-dev"
    exit 77
fi
mkdir -p "$out"
# shellcheck disable=SC2046  # pkg-config's flags are separate words
g++ -std=c++20 -O1 -Wall -Wextra -Werror -fPIC -DEMBER_HAVE_KSYNTAX -I"$root" -I"$inc" $(pkg-config --cflags Qt5Gui) \
    "$root/app/chat/ksyntax/code_highlighter_ksyntax.cpp" "$root/app/chat/code_highlighter.cpp" \
    "$root/tests/app/ksyntax_kf5_check.cpp" \
    -o "$out/ksyntax_kf5_check" -lKF5SyntaxHighlighting $(pkg-config --libs Qt5Gui)
QT_QPA_PLATFORM=offscreen "$out/ksyntax_kf5_check"
