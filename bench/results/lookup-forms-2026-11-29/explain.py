#!/usr/bin/env python3
# explain.py DB FORMDIR [mode]: prepare script s0 with its vars as parameters, execute 6 times, EXPLAIN the 7th, count locks.
import sys, re, subprocess, os
db, d = sys.argv[1], sys.argv[2]
mode = sys.argv[3] if len(sys.argv) > 3 else "auto"
body = open(d + "/s0.sql").read().strip().rstrip(";")
defs = dict(l.split("=", 1) for l in open(d + "/defs").read().split("\n") if l)
names = []
def sub(m):
    n = m.group(1)
    if n not in names: names.append(n)
    return "$%d" % (names.index(n) + 1)
sql = re.sub(r"(?<!:):([a-z][a-z0-9_]*)", sub, body)
args = ", ".join("'%s'" % defs[n] for n in names)
ex = f"execute a({args})"
script = f"""set plan_cache_mode = {mode};
prepare a as {sql};
\\o /dev/null
{ex};{ex};{ex};{ex};{ex};{ex};
\\o
explain (analyze, buffers, costs off, summary on) {ex};
select generic_plans, custom_plans from pg_prepared_statements;
begin;
\\o /dev/null
{ex};
\\o
select count(*) filter (where fastpath) fastpath_locks, count(*) filter (where not fastpath) lockmgr_locks, count(*) filter (where c.relkind in ('r','p')) tables, count(*) filter (where c.relkind in ('i','I')) indexes from pg_locks l join pg_class c on c.oid = l.relation where pid = pg_backend_pid() and locktype='relation' and c.relname not like 'pg_%';
commit;
"""
out = subprocess.run(["psql", "-h", "127.0.0.1", "-p", os.environ.get("PGPORT", "5432"), "-U", "postgres", "-d", db, "-X"], input=script, capture_output=True, text=True)
print(out.stdout, out.stderr)
