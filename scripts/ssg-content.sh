#!/usr/bin/env bash
# The SCAP Security Guide content that molecule/site's OpenSCAP scan uses:
# - ssg-ubuntu2204-ds.xml (CIS Ubuntu 22.04 profiles) from ssg-debderived 0.1.65 in Debian 12's archive: Ubuntu's
#   archive has no ssg package for 22.04, so it is fetched here on the controller (a Debian 12 host) and copied in;
# - ssg-debian12-ds.xml (ANSSI NT28 profiles for Debian 12) from ssg-debian 0.1.76 of Debian 13: Debian 12's own
#   ssg-debian (0.1.65) has only ssg-debian11-ds.xml, whose rules are all "not applicable" on Debian 12. The .deb is
#   fetched from the Debian mirror's pool by its version and checked against its SHA-256;
# - ssg-ubuntu2404-ds.xml (CIS Ubuntu 24.04 profiles, tests/vm/server.sh) from ssg-debderived 0.1.76 of Debian 13, the
#   same way (its SHA-256 is the one Debian 13's package index gives).
#   scripts/ssg-content.sh DIR   -> DIR/ssg-*-ds.xml (kept; fetched again only when missing)
set -euo pipefail
dest=${1:-.cache/ssg}
mirror=${GPUOPS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
trixie_deb=ssg-debian_0.1.76-1_all.deb
trixie_sha256=f6880719015c16e8e221bc2503c0e5a9f83d6a09fc6f9292d3522e46bf4fc9d7
trixie_derived_deb=ssg-debderived_0.1.76-1_all.deb
trixie_derived_sha256=dd41637d94ac0f9f3cb5cbb41a6ce17d8f0739673291bdb1763c3f16bc8dbee7
if [[ -f $dest/ssg-ubuntu2204-ds.xml && -f $dest/ssg-debian12-ds.xml && -f $dest/ssg-ubuntu2404-ds.xml ]]; then
  exit 0
fi
mkdir -p "$dest"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A host whose package lists are stale or empty refreshes them once.
(cd "$tmp" && { apt-get download ssg-debderived >/dev/null 2>&1 || { apt-get update -qq && apt-get download ssg-debderived >/dev/null; }; })
curl -fsSL -o "$tmp/$trixie_deb" "$mirror/pool/main/s/scap-security-guide/$trixie_deb"
curl -fsSL -o "$tmp/trixie-$trixie_derived_deb" "$mirror/pool/main/s/scap-security-guide/$trixie_derived_deb"
echo "$trixie_sha256  $tmp/$trixie_deb" | sha256sum -c --quiet -
echo "$trixie_derived_sha256  $tmp/trixie-$trixie_derived_deb" | sha256sum -c --quiet -
dpkg-deb -x "$tmp"/ssg-debderived_*_all.deb "$tmp/bookworm"
dpkg-deb -x "$tmp/$trixie_deb" "$tmp/trixie"
dpkg-deb -x "$tmp/trixie-$trixie_derived_deb" "$tmp/trixie"
cp "$tmp"/bookworm/usr/share/xml/scap/ssg/content/ssg-ubuntu2204-ds.xml "$dest/"
cp "$tmp"/trixie/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml "$dest/"
cp "$tmp"/trixie/usr/share/xml/scap/ssg/content/ssg-ubuntu2404-ds.xml "$dest/"
echo "SCAP content in $dest"
