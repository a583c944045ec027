package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/trace"
)

// The results table (replay --results FILE.parquet): one row per (capture,
// scheduler, cgroup) with the replay's per-cgroup figures, so that the
// files of many replays (a fleet's captures, several schedulers) can be
// compared in one query. Columns, in order:
//
//	capture                 utf8     the INPUT as given on the command line
//	scheduler, kernel, mode utf8     the model, the kernel version it behaved as, closed|open
//	cgroup_id               uint64   cgroup id (inode) as the capture records it, 0 none
//	cgroup_path             utf8     its path when the capture names it, else null
//	weight                  int32    --weight given for it; null when none was
//	real_mib_per_s, predicted_mib_per_s, real_share, predicted_share,
//	share_error, bandwidth_error, slowdown, window_error_mib_per_s, ks,
//	real_bytes, predicted_bytes
//	                                 as in replay --json's cgroups[] (see diff.Cgroup)
//	real_requests, predicted_requests  uint64  requests of the cgroup that completed
//	real_iops, predicted_iops  float64  those requests / the cgroup's active span
//	                                 (its first Q to its last C), 1/s
//	{real,predicted}_{q2c,d2c}_{p50,p99}_s  float64  latency quantiles of those
//	                                 requests, seconds (linear interpolation between
//	                                 order statistics, as replay --json's latency);
//	                                 null when the cgroup has none
//
// Field metadata unit=s, MiB/s, 1/s or bytes gives the units.

// resultsRun is what names a replay in the results table.
type resultsRun struct {
	Capture, Scheduler, Kernel, Mode string
	Weights                          map[uint64]int // --weight, by cgroup id
}

// resultsRow is one row of the results table.
type resultsRow struct {
	cg              diff.Cgroup
	weight          int
	hasWeight       bool
	real, pred      cgroupLatency
	realIOPS, pIOPS float64
}

// cgroupLatency is one side's completed requests of a cgroup.
type cgroupLatency struct {
	n        uint64
	q2c, d2c []float64 // seconds, sorted
}

// resultsRows computes the rows of one replay: one per cgroup of the diff.
func resultsRows(run resultsRun, r *diff.Result) []resultsRow {
	realLat, realSpan := cgroupLatencies(r.RealSide)
	predLat, predSpan := cgroupLatencies(r.PredSide)
	rows := make([]resultsRow, 0, len(r.Cgroups))
	for _, cg := range r.Cgroups {
		w, ok := run.Weights[cg.ID]
		row := resultsRow{cg: cg, weight: w, hasWeight: ok, real: realLat[cg.ID], pred: predLat[cg.ID]}
		if s := realSpan[cg.ID]; s > 0 {
			row.realIOPS = float64(row.real.n) / s
		}
		if s := predSpan[cg.ID]; s > 0 {
			row.pIOPS = float64(row.pred.n) / s
		}
		rows = append(rows, row)
	}
	return rows
}

// cgroupLatencies groups a side's completed requests by cgroup: their Q2C
// and D2C latencies (sorted) and each cgroup's active span in seconds,
// from its first request's queue time to its last completion.
func cgroupLatencies(s *diff.Side) (map[uint64]cgroupLatency, map[uint64]float64) {
	out := map[uint64]cgroupLatency{}
	first, last := map[uint64]trace.Time{}, map[uint64]trace.Time{}
	if s == nil {
		return out, map[uint64]float64{}
	}
	for i := range s.NumRequests() {
		qv := s.RequestAt(i)
		q := &qv
		if q.Complete == trace.NoTime {
			continue
		}
		c := out[q.Cgroup]
		c.n++
		start := q.Queue
		if start == trace.NoTime {
			start = q.Issue
		}
		if q.Queue != trace.NoTime && q.Complete >= q.Queue {
			c.q2c = append(c.q2c, float64(q.Complete-q.Queue)/1e9)
		}
		if q.Issue != trace.NoTime && q.Complete >= q.Issue {
			c.d2c = append(c.d2c, float64(q.Complete-q.Issue)/1e9)
		}
		out[q.Cgroup] = c
		if f, ok := first[q.Cgroup]; start != trace.NoTime && (!ok || start < f) {
			first[q.Cgroup] = start
		}
		if l, ok := last[q.Cgroup]; !ok || q.Complete > l {
			last[q.Cgroup] = q.Complete
		}
	}
	span := map[uint64]float64{}
	for id, c := range out {
		slices.Sort(c.q2c)
		slices.Sort(c.d2c)
		if f, ok := first[id]; ok && last[id] > f {
			span[id] = float64(last[id]-f) / 1e9
		}
	}
	return out, span
}

func unit(u string) arrow.Metadata { return arrow.NewMetadata([]string{"unit"}, []string{u}) }

// resultsSchema is the results table's schema.
func resultsSchema() *arrow.Schema {
	f64 := arrow.PrimitiveTypes.Float64
	u64 := arrow.PrimitiveTypes.Uint64
	str := arrow.BinaryTypes.String
	fields := []arrow.Field{
		{Name: "capture", Type: str},
		{Name: "scheduler", Type: str},
		{Name: "kernel", Type: str},
		{Name: "mode", Type: str},
		{Name: "cgroup_id", Type: u64},
		{Name: "cgroup_path", Type: str, Nullable: true},
		{Name: "weight", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "real_mib_per_s", Type: f64, Metadata: unit("MiB/s")},
		{Name: "predicted_mib_per_s", Type: f64, Metadata: unit("MiB/s")},
		{Name: "real_share", Type: f64},
		{Name: "predicted_share", Type: f64},
		{Name: "share_error", Type: f64},
		{Name: "bandwidth_error", Type: f64},
		{Name: "slowdown", Type: f64},
		{Name: "window_error_mib_per_s", Type: f64, Metadata: unit("MiB/s")},
		{Name: "ks", Type: f64},
		{Name: "real_bytes", Type: u64, Metadata: unit("bytes")},
		{Name: "predicted_bytes", Type: u64, Metadata: unit("bytes")},
		{Name: "real_requests", Type: u64},
		{Name: "predicted_requests", Type: u64},
		{Name: "real_iops", Type: f64, Metadata: unit("1/s")},
		{Name: "predicted_iops", Type: f64, Metadata: unit("1/s")},
	}
	for _, side := range []string{"real", "predicted"} {
		for _, lat := range []string{"q2c", "d2c"} {
			for _, q := range []string{"p50", "p99"} {
				fields = append(fields, arrow.Field{Name: side + "_" + lat + "_" + q + "_s", Type: f64, Nullable: true, Metadata: unit("s")})
			}
		}
	}
	md := arrow.NewMetadata([]string{"tracesched.table"}, []string{"results"})
	return arrow.NewSchema(fields, &md)
}

// writeResults writes the rows of one replay to w as a Parquet file.
func writeResults(w io.Writer, run resultsRun, rows []resultsRow) error {
	mem := memory.NewGoAllocator()
	schema := resultsSchema()
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	col := 0
	next := func() array.Builder { col++; return b.Field(col - 1) }
	for _, r := range rows {
		col = 0
		next().(*array.StringBuilder).Append(run.Capture)
		next().(*array.StringBuilder).Append(run.Scheduler)
		next().(*array.StringBuilder).Append(run.Kernel)
		next().(*array.StringBuilder).Append(run.Mode)
		next().(*array.Uint64Builder).Append(r.cg.ID)
		if p := next().(*array.StringBuilder); r.cg.Path != "" {
			p.Append(r.cg.Path)
		} else {
			p.AppendNull()
		}
		if wb := next().(*array.Int32Builder); r.hasWeight {
			wb.Append(int32(r.weight))
		} else {
			wb.AppendNull()
		}
		for _, v := range []float64{r.cg.RealMiBps, r.cg.PredMiBps, r.cg.RealShare, r.cg.PredShare, r.cg.ShareError,
			r.cg.BandwidthError, r.cg.Slowdown, r.cg.WindowError, r.cg.KS} {
			next().(*array.Float64Builder).Append(v)
		}
		for _, v := range []uint64{r.cg.RealBytes, r.cg.PredBytes, r.real.n, r.pred.n} {
			next().(*array.Uint64Builder).Append(v)
		}
		next().(*array.Float64Builder).Append(r.realIOPS)
		next().(*array.Float64Builder).Append(r.pIOPS)
		for _, side := range []cgroupLatency{r.real, r.pred} {
			for _, xs := range [][]float64{side.q2c, side.d2c} {
				for _, q := range []float64{0.5, 0.99} {
					fb := next().(*array.Float64Builder)
					if v, ok := diff.Quantile(xs, q); ok {
						fb.Append(v)
					} else {
						fb.AppendNull()
					}
				}
			}
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithCreatedBy("tracesched"))
	fw, err := pqarrow.NewFileWriter(schema, struct{ io.Writer }{w}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return err
	}
	if err := fw.Write(rec); err != nil {
		fw.Close()
		return err
	}
	return fw.Close()
}

// writeResultsFile writes the results table of one replay to path,
// atomically.
func writeResultsFile(ctx context.Context, ios *IOStreams, path string, run resultsRun, r *diff.Result) error {
	f, err := createAtomic(ctx, ios, path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := writeResults(f, run, resultsRows(run, r)); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Commit()
}
