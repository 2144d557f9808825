#!/usr/bin/env bash
# Installs Debian's Chromium (and a font for its screenshots) when no Chromium or Chrome
# binary is on PATH, so the web page's browser test (runtime/monitor) runs instead of
# skipping. Needs root and Debian's package mirrors; CI (.ci/run) calls it before
# `make test`. Prints the binary it found or installed.
set -euo pipefail

find_browser() {
	local b
	for b in chromium chromium-browser google-chrome google-chrome-stable; do
		if command -v "$b" >/dev/null 2>&1; then
			command -v "$b"
			return 0
		fi
	done
	return 1
}

if path=$(find_browser); then
	echo "chromium: $path"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "chromium: not found, and installing Debian's package needs root (apt-get install chromium)" >&2
	exit 1
fi
echo "chromium: not found; installing Debian's package"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
path=$(find_browser) || { echo "chromium: apt-get installed chromium but no binary is on PATH" >&2; exit 1; }
echo "chromium: $path"
