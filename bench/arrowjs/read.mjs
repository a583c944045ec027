// Reads a tracesched events file and a requests file with apache-arrow (JS),
// registering fzstd as the zstd codec, and prints row counts, the schema
// metadata and the first rows. Usage: node read.mjs EVENTS.arrow REQUESTS.arrow
import { readFileSync } from 'node:fs';
import { tableFromIPC, compressionRegistry, CompressionType } from 'apache-arrow';
import { decompress } from 'fzstd';

// fzstd may return a view at an odd offset of a larger buffer; Arrow JS
// builds typed arrays (BigInt64Array...) directly on the result, which need
// aligned offsets, so copy such views.
compressionRegistry.set(CompressionType.ZSTD, {
  decode: (data) => {
    const out = decompress(data);
    return out.byteOffset % 8 === 0 ? out : out.slice();
  },
});

function show(path, want) {
  const t0 = process.hrtime.bigint();
  const table = tableFromIPC(readFileSync(path));
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const md = table.schema.metadata;
  if (md.get('tracesched.stream') !== want) {
    throw new Error(`${path}: tracesched.stream is ${md.get('tracesched.stream')}, want ${want}`);
  }
  console.log(`${path}: ${want}, ${table.numRows} rows in ${table.batches.length} batches, ${table.numCols} columns (read in ${ms.toFixed(1)} ms)`);
  console.log(`  metadata: ${JSON.stringify(Object.fromEntries(md))}`);
  const n = Math.min(3, table.numRows);
  for (let i = 0; i < n; i++) {
    const row = table.get(i).toJSON();
    for (const k of Object.keys(row)) {
      if (typeof row[k] === 'bigint') row[k] = row[k].toString();
    }
    console.log(`  row ${i}: ${JSON.stringify(row)}`);
  }
  return table;
}

const [events, requests] = process.argv.slice(2);
if (!events || !requests) {
  console.error('usage: node read.mjs EVENTS.arrow REQUESTS.arrow');
  process.exit(2);
}
const ev = show(events, 'events');
// Count actions over the whole file through the dictionary column.
const counts = {};
for (const a of ev.getChild('action')) counts[a] = (counts[a] ?? 0) + 1;
console.log(`  actions: ${JSON.stringify(counts)}`);
const rq = show(requests, 'requests');
let nulls = 0;
for (const c of rq.getChild('complete_ns')) if (c === null) nulls++;
console.log(`  requests without completion (complete_ns null): ${nulls}`);
