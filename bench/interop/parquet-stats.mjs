// Checks tracesched's Parquet files against `tracesched stats --json` on the
// same capture, with two readers that are not tracesched's: DuckDB
// (@duckdb/node-api) and Polars (nodejs-polars, through its SQL context).
// Each figure is computed by SQL in each engine from the Parquet columns and
// compared exactly (latency averages to 1e-9 relative).
// Usage: node parquet-stats.mjs STATS.json EVENTS.parquet REQUESTS.parquet [LABEL]
// Prints one line per reader; exits 1 on any difference.
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import pl from 'nodejs-polars';

const [statsPath, evPath, rqPath, label = rqPath] = process.argv.slice(2);
if (!rqPath) {
  console.error('usage: node parquet-stats.mjs STATS.json EVENTS.parquet REQUESTS.parquet [LABEL]');
  process.exit(2);
}
const st = JSON.parse(readFileSync(statsPath, 'utf8'));

// flag(col, bit): SQL for "bit is set in col" (both dialects take &).
// Sums cast to BIGINT: Polars sums a UInt32 column as UInt32, wrapping.
const flag = (c, b) => `((${c} & ${b}) <> 0)`;
const MERGED = 32, WRITE = 2, DISCARD = 8192;
function queries() {
  const live = `NOT ${flag('flags', MERGED)}`;
  const wr = `(${flag('cat', WRITE)} OR ${flag('cat', DISCARD)})`;
  const done = `complete_ns IS NOT NULL AND NOT ${flag('flags', 2)}`;
  return {
    'events.total': 'SELECT COUNT(*) FROM e',
    'requests.total': `SELECT COUNT(*) FROM r WHERE ${live}`,
    'requests.writes': `SELECT COUNT(*) FROM r WHERE ${live} AND ${wr}`,
    'requests.reads': `SELECT COUNT(*) FROM r WHERE ${live} AND NOT ${wr}`,
    'requests.bytes_written': `SELECT COALESCE(SUM(CAST(bytes AS BIGINT)), 0) FROM r WHERE ${live} AND ${wr} AND ${done}`,
    'requests.bytes_read': `SELECT COALESCE(SUM(CAST(bytes AS BIGINT)), 0) FROM r WHERE ${live} AND NOT ${wr} AND ${done}`,
    'requests.incomplete': `SELECT COUNT(*) FROM r WHERE ${live} AND ${flag('flags', 2)}`,
    'merges.request': `SELECT COUNT(*) FROM r WHERE ${flag('flags', MERGED)}`,
    'latency.D2C.n': `SELECT COUNT(*) FROM r WHERE ${live} AND issue_ns IS NOT NULL AND complete_ns IS NOT NULL AND complete_ns >= issue_ns`,
    'latency.D2C.sum_ns': `SELECT COALESCE(SUM(complete_ns - issue_ns), 0) FROM r WHERE ${live} AND issue_ns IS NOT NULL AND complete_ns IS NOT NULL AND complete_ns >= issue_ns`,
    'latency.D2C.max_ns': `SELECT COALESCE(MAX(complete_ns - issue_ns), 0) FROM r WHERE ${live} AND issue_ns IS NOT NULL AND complete_ns IS NOT NULL AND complete_ns >= issue_ns`,
  };
}

function expected(key) {
  if (key === 'latency.D2C.sum_ns') return null; // compared through avg below
  if (key === 'latency.D2C.max_ns') return Math.round(st.latency.D2C.max * 1e9);
  return key.split('.').reduce((o, k) => o[k], st);
}

function compare(engine, got, byAction) {
  const bad = [];
  for (const [k, v] of Object.entries(got)) {
    const want = expected(k);
    if (want === null) continue;
    if (Number(v) !== Number(want)) bad.push(`${k} ${v} != ${want}`);
  }
  const n = Number(got['latency.D2C.n']);
  if (n > 0) {
    const avg = Number(got['latency.D2C.sum_ns']) / n / 1e9;
    if (Math.abs(avg - st.latency.D2C.avg) > 1e-9 * Math.max(1, Math.abs(avg))) bad.push(`D2C avg ${avg} != ${st.latency.D2C.avg}`);
  }
  for (const [a, want] of Object.entries(st.events.by_action)) {
    const v = byAction[a] ?? 0;
    if (Number(v) !== Number(want)) bad.push(`events.by_action.${a} ${v} != ${want}`);
  }
  for (const a of Object.keys(byAction)) {
    if (!(a in st.events.by_action)) bad.push(`events.by_action.${a} ${byAction[a]} not in stats`);
  }
  const figures = Object.keys(got).length + Object.keys(st.events.by_action).length;
  const line = `${label}: ${engine}: ${got['events.total']} events, ${got['requests.total']} requests, ` +
    `${got['requests.bytes_read']} bytes read, ${got['requests.bytes_written']} written, D2C n ${got['latency.D2C.n']}: ` +
    (bad.length ? `MISMATCH ${bad.join('; ')}` : `${figures} figures equal to stats --json`);
  console.log(line);
  return bad.length === 0;
}

async function duck() {
  const con = await (await DuckDBInstance.create(':memory:')).connect();
  const q = (s) => s.replaceAll("'", "''");
  await con.run(`CREATE VIEW e AS SELECT * FROM read_parquet('${q(evPath)}')`);
  await con.run(`CREATE VIEW r AS SELECT * FROM read_parquet('${q(rqPath)}')`);
  const got = {};
  for (const [k, sql] of Object.entries(queries())) {
    got[k] = (await con.runAndReadAll(sql)).getRows()[0][0];
  }
  const byAction = {};
  for (const [a, n] of (await con.runAndReadAll('SELECT action, COUNT(*) FROM e GROUP BY action')).getRows()) byAction[a] = n;
  return compare('duckdb', got, byAction);
}

function polars() {
  const ctx = pl.SQLContext({ e: pl.readParquet(evPath), r: pl.readParquet(rqPath) });
  const one = (sql) => {
    const df = ctx.execute(sql, { eager: true });
    // Series.get truncates Int64 to 32 bits in nodejs-polars 0.25.2; toArray does not.
    return df.getColumns()[0].toArray()[0] ?? 0;
  };
  const got = {};
  for (const [k, sql] of Object.entries(queries())) got[k] = one(sql);
  const byAction = {};
  const df = ctx.execute('SELECT CAST(action AS VARCHAR) AS a, COUNT(*) AS n FROM e GROUP BY a', { eager: true });
  const as = df.getColumn('a').toArray(), ns = df.getColumn('n').toArray();
  as.forEach((a, i) => { byAction[a] = ns[i]; });
  return compare('polars', got, byAction);
}

let ok = await duck();
try {
  ok = polars() && ok;
} catch (e) {
  console.log(`${label}: polars: ERROR ${e.message || e}`);
  ok = false;
}
process.exit(ok ? 0 : 1);
