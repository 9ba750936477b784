#!/usr/bin/env bash
# Builds Citus 12.1.12 (the distributed engine mainnet's mirror node runs its v2
# layout on) from third_party/citus and installs it into Debian's PostgreSQL 15,
# the only server whose headers these machines can install (Citus 12.1 supports
# PostgreSQL 14–16). For the tests' v2-citus variant and the Citus benchmark;
# mirrorql never links it. Does nothing when this build is already installed.
# Needs root (apt-get and the install into /usr/lib/postgresql/15).
set -euo pipefail

version=12.1.12
sha256=a344da15513601e718a268d907e1c86e43a69eb243398b929f65a4580723f552
root=$(cd "$(dirname "$0")/.." && pwd)
tarball="$root/third_party/citus/citus-$version.tar.gz"
pg_config=/usr/lib/postgresql/15/bin/pg_config
as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

installed() {
  [[ -x $pg_config ]] || return 1
  local control
  control="$("$pg_config" --sharedir)/extension/citus.control"
  [[ -f "$("$pg_config" --pkglibdir)/citus.so" && -f $control ]] &&
    grep -q "^# citus $version\$" "$control"
}
if installed; then
  echo "citus $version: installed"; exit 0
fi

# The build's Debian packages (configure names anything missing).
packages=(postgresql-15 postgresql-server-dev-15 libcurl4-openssl-dev liblz4-dev libzstd-dev libkrb5-dev
  libssl-dev libselinux1-dev libxslt1-dev libpam0g-dev libreadline-dev autoconf flex bison make gcc)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

got=$(sha256sum "$tarball" | cut -d' ' -f1)
[[ $got == "$sha256" ]] || { echo "scripts/citus.sh: $tarball: sha256 $got, want $sha256" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xzf "$tarball" -C "$work"
cd "$work/citus-$version"
# No LLVM bitcode: the JIT is off on the test clusters, and it doubles the build.
./configure --quiet --without-libcurl PG_CONFIG="$pg_config" with_llvm=no >/dev/null
make -s -j"$(nproc)" with_llvm=no >/dev/null
as_root make -s install with_llvm=no >/dev/null
# The marker installed() checks: the control file names the version it came from.
echo "# citus $version" | as_root tee -a "$("$pg_config" --sharedir)/extension/citus.control" >/dev/null
installed || { echo "scripts/citus.sh: citus $version did not install" >&2; exit 1; }
echo "citus $version: built and installed"
