#!/bin/bash
# Copies a rig capture directory SRC (SRC/NAME.*, manifest.json) to DST
# under the name basename(DST): DST/NEWNAME.* and its manifest with that name.
# Usage: bench/whatif/rename-capture.sh SRC DST
set -eu
src=$1 dst=$2
old=$(basename "$src") new=$(basename "$dst")
mkdir -p "$dst"
for f in "$src/$old".*; do
  cp "$f" "$dst/$new${f#"$src/$old"}"
done
jq --arg n "$new" '.name = $n' "$src/manifest.json" > "$dst/manifest.json"
