#!/usr/bin/env bash
# The SCAP Security Guide content that molecule/site's OpenSCAP scan uses, from Debian 12's archive (ssg 0.1.65):
# ssg-debderived has ssg-ubuntu2204-ds.xml (CIS Ubuntu 22.04 profiles), ssg-debian has ssg-debian11-ds.xml (ANSSI;
# Debian 12's own data stream, ssg-debian12-ds.xml, first comes with 0.1.71 in Debian 13). Ubuntu's archive has no
# ssg package for 22.04, so the content is fetched here on the controller (a Debian 12 host) and copied in.
#   scripts/ssg-content.sh DIR   -> DIR/ssg-*-ds.xml (kept; fetched again only when missing)
set -euo pipefail
dest=${1:-.cache/ssg}
if [[ -f $dest/ssg-ubuntu2204-ds.xml && -f $dest/ssg-debian11-ds.xml ]]; then exit 0; fi
mkdir -p "$dest"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download ssg-debderived ssg-debian >/dev/null 2>&1)
for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$tmp/root"; done
cp "$tmp"/root/usr/share/xml/scap/ssg/content/ssg-{ubuntu2204,debian11}-ds.xml "$dest/"
echo "SCAP content in $dest"
