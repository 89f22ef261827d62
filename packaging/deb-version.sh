#!/usr/bin/env bash
# deb-version.sh SRC_DIR SUITE: the version of a package built from
# SRC_DIR for SUITE. Every build sorts after the one before it, and a
# suite's build after the older suite's:
#   <upstream>+git<commits>.<hash>-1~deb<N>u1   e.g. 0.1.0+git517.ed79e0b-1~deb13u1
# <upstream> is the top of packaging/debian/changelog; <commits> is the
# number of commits on HEAD, which only grows along main. A tree without
# git gets the changelog's version with the suite suffix alone.
set -euo pipefail
src=${1:?usage: deb-version.sh SRC_DIR SUITE}
suite=${2:?usage: deb-version.sh SRC_DIR SUITE}
. "$src/scripts/suites.sh"
n=$(suite_number "$suite") || { echo "deb-version: unknown suite '$suite'" >&2; exit 2; }
full=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' "$src/packaging/debian/changelog")
upstream=${full%-*}
if count=$(git -C "$src" rev-list --count HEAD 2>/dev/null) && hash=$(git -C "$src" rev-parse --short=7 HEAD 2>/dev/null); then
	echo "${upstream}+git${count}.${hash}-1~deb${n}u1"
else
	echo "${upstream}-1~deb${n}u1"
fi
