#!/bin/bash
# run.sh DB FORMDIR [secs] -> prints "tps"
db=$1; dir=$2; secs=${3:-10}; clients=${CLIENTS:-16}
while [ -e /tmp/bench.lock ]; do sleep 30; done
args=()
for f in $dir/s*.sql; do args+=(-f "$f"); done
while IFS= read -r l; do [ -n "$l" ] && args+=(-D "$l"); done < $dir/defs
out=$(pgbench -h 127.0.0.1 -p ${PGPORT:-5432} -U postgres -n -c$clients -j2 -M prepared -T$secs "${args[@]}" $db 2>&1)
tps=$(echo "$out" | sed -n 's/^tps = \([0-9.]*\) (without.*/\1/p')
if [ -z "$tps" ]; then echo "ERR $(echo "$out" | grep -i error | head -3)"; else echo $tps; fi
