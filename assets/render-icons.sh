#!/usr/bin/env bash
# Renders icon/earshot.svg to the PNG sizes the app, the desktop entry and
# the packagers use. Run through `go generate ./assets` after editing the SVG;
# the PNGs are committed so that building Earshot needs neither tool.
# Needs rsvg-convert (Debian: librsvg2-bin) and ImageMagick's convert.
set -euo pipefail
cd "$(dirname "$0")/icon"

command -v rsvg-convert >/dev/null || { echo "render-icons: rsvg-convert not found (Debian: apt-get install librsvg2-bin)" >&2; exit 1; }
# Only a real ImageMagick is used: a "convert" earlier on PATH that is not one is skipped.
magick=""
for c in magick /usr/bin/convert convert; do
  if command -v "$c" >/dev/null && "$c" -version 2>/dev/null | grep -q ImageMagick; then magick="$c"; break; fi
done
[ -n "$magick" ] || { echo "render-icons: ImageMagick not found (Debian: apt-get install imagemagick)" >&2; exit 1; }

# rsvg-convert draws the vectors at 512 px; ImageMagick scales down from that
# with a Lanczos filter and strips metadata so the PNGs are byte-reproducible.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
rsvg-convert --width 512 --height 512 earshot.svg --output "$tmp/master.png"
sizes=(512 256 128 96 64 48 32 24 22 16)
for size in "${sizes[@]}"; do
  "$magick" "$tmp/master.png" -filter Lanczos -resize "${size}x${size}" -strip \
    -define png:exclude-chunks=date,time PNG32:"earshot-${size}.png"
done
printf 'render-icons: wrote icon/earshot-%s.png\n' "${sizes[@]}"

