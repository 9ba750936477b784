// The graphql-http server audit, run against the URL given.
import { auditServer } from 'graphql-http/lib/audits/server.mjs';
const url = process.argv[2];
const results = await auditServer({ url });
let ok = 0;
for (const r of results) {
  if (r.status === 'ok') ok++;
  else console.log(`${r.status} ${r.id} ${r.name}: ${r.reason}`);
}
console.log(`${ok} passed, ${results.length - ok} failed`);
process.exit(ok === results.length ? 0 : 1);
