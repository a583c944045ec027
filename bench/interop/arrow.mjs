// Reads tracesched's Arrow IPC files with two readers that are not
// tracesched's, with no workaround: apache-arrow (JavaScript) with fzstd
// registered as its zstd codec as is (its output handed to Arrow JS
// unchanged: no copy to an aligned buffer), and Polars (nodejs-polars
// readIPC on the file's bytes). Checks the row counts against
// `tracesched stats --json` and a column sum between the two readers.
// Usage: node arrow.mjs STATS.json EVENTS.arrow REQUESTS.arrow [LABEL]
// Prints one line per file; exits 1 if a reader refuses a file or disagrees.
import { readFileSync } from 'node:fs';
import { tableFromIPC, compressionRegistry, CompressionType } from 'apache-arrow';
import { decompress } from 'fzstd';
import pl from 'nodejs-polars';

const [statsPath, evPath, rqPath, label = evPath] = process.argv.slice(2);
if (!rqPath) {
  console.error('usage: node arrow.mjs STATS.json EVENTS.arrow REQUESTS.arrow [LABEL]');
  process.exit(2);
}
const st = JSON.parse(readFileSync(statsPath, 'utf8'));
let unaligned = 0;
compressionRegistry.set(CompressionType.ZSTD, {
  decode: (b) => { const o = decompress(b); if (o.byteOffset % 8) unaligned++; return o; },
});

function check(kind, path, want, sumCol) {
  const bytes = readFileSync(path);
  const res = { js: null, polars: null, jsSum: null, plSum: null };
  const errs = [];
  try {
    const t = tableFromIPC(bytes);
    res.js = t.numRows;
    let s = 0n;
    for (const v of t.getChild(sumCol)) if (v !== null) s += BigInt(v);
    res.jsSum = s;
  } catch (e) { errs.push(`apache-arrow: ${e.message || e}`); }
  try {
    const df = pl.readIPC(bytes);
    res.polars = df.height;
    // Cast: Polars sums a UInt32 column as UInt32 (wrapping); toArray: Series.get truncates Int64.
    res.plSum = BigInt(df.select(pl.col(sumCol).cast(pl.Float64).sum()).getColumns()[0].toArray()[0]);
  } catch (e) { errs.push(`polars: ${e.message || e}`); }
  if (res.js !== null && res.js !== want) errs.push(`apache-arrow ${res.js} rows, stats says ${want}`);
  if (res.polars !== null && res.polars !== want) errs.push(`polars ${res.polars} rows, stats says ${want}`);
  if (res.jsSum !== null && res.plSum !== null && res.jsSum !== res.plSum) errs.push(`sum(${sumCol}) ${res.jsSum} (apache-arrow) != ${res.plSum} (polars)`);
  console.log(`${label}: ${kind} arrow: apache-arrow ${res.js ?? '-'} rows, polars ${res.polars ?? '-'} rows, ` +
    `sum(${sumCol}) ${res.jsSum ?? '-'}: ` + (errs.length ? `FAIL ${errs.join('; ')}` : 'ok'));
  return errs.length === 0;
}

const reqRows = st.requests.total + st.merges.request;
let ok = check('events', evPath, st.events.total, 'bytes');
ok = check('requests', rqPath, reqRows, 'bytes') && ok;
if (unaligned) {
  console.log(`${label}: fzstd returned ${unaligned} buffers at an unaligned offset`);
}
process.exit(ok ? 0 : 1);
