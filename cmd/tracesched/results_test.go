package main

import (
	"bytes"
	"context"
	"math"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/trace"
)

const ms = trace.Time(1_000_000)

// TestResultsTable writes the results of a hand-made diff and reads the
// Parquet file back. Cgroup 7's real requests (Q, D, C in ms: 0 1 2, 1 2 4,
// 2 3 8, and one never completed) give Q2C 2, 3, 6 ms and D2C 1, 2, 5 ms:
// p50 3 and 2 ms, p99 3+0.98*3 = 5.94 and 2+0.98*3 = 4.94 ms (linear
// interpolation at 0.99*(3-1) = 1.98), 3 requests over 8 ms = 375/s.
// Cgroup 9 completed nothing on the predicted side: nulls.
func TestResultsTable(t *testing.T) {
	rq := func(id uint64, cg uint64, q, d, c trace.Time) trace.Request {
		return trace.Request{ID: id, Cgroup: cg, Queue: q, Issue: d, Complete: c, Bytes: 4096}
	}
	realReqs := []trace.Request{
		rq(1, 7, 0, 1*ms, 2*ms), rq(2, 7, 1*ms, 2*ms, 4*ms), rq(3, 7, 2*ms, 3*ms, 8*ms), rq(4, 7, 3*ms, 4*ms, trace.NoTime),
		rq(5, 9, 0, 1*ms, 3*ms),
	}
	predReqs := []trace.Request{rq(1, 7, 0, 1*ms, 2*ms)}
	res := &diff.Result{
		Cgroups: []diff.Cgroup{
			{ID: 7, Path: "/a", RealMiBps: 1.5, PredMiBps: 2.5, RealShare: 0.25, PredShare: 0.5, RealBytes: 12288, PredBytes: 4096},
			{ID: 9, RealMiBps: 4.5},
		},
		RealSide: diff.FromData(trace.Meta{}, nil, realReqs, nil),
		PredSide: diff.FromData(trace.Meta{}, nil, predReqs, nil),
	}
	run := resultsRun{Capture: "cap1", Scheduler: "bfq", Kernel: "6.18", Mode: "closed", Weights: map[uint64]int{7: 300}}
	var buf bytes.Buffer
	if err := writeResults(&buf, run, resultsRows(run, res)); err != nil {
		t.Fatal(err)
	}
	pf, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	if tbl.NumRows() != 2 {
		t.Fatalf("%d rows, want 2", tbl.NumRows())
	}
	col := func(name string) any {
		idx := tbl.Schema().FieldIndices(name)
		if len(idx) != 1 {
			t.Fatalf("no column %s", name)
		}
		return tbl.Column(idx[0]).Data().Chunk(0)
	}
	f64 := func(name string, row int) (float64, bool) {
		a := col(name).(*array.Float64)
		return a.Value(row), a.IsValid(row)
	}
	near := func(name string, row int, want float64) {
		t.Helper()
		got, ok := f64(name, row)
		if !ok || math.Abs(got-want) > 1e-12 {
			t.Errorf("%s row %d = %v (valid %v), want %v", name, row, got, ok, want)
		}
	}
	if s := col("capture").(*array.String); s.Value(0) != "cap1" || s.Value(1) != "cap1" {
		t.Errorf("capture %q %q", s.Value(0), s.Value(1))
	}
	if s := col("kernel").(*array.String); s.Value(0) != "6.18" {
		t.Errorf("kernel %q", s.Value(0))
	}
	if ids := col("cgroup_id").(*array.Uint64); ids.Value(0) != 7 || ids.Value(1) != 9 {
		t.Errorf("cgroup ids %d %d", ids.Value(0), ids.Value(1))
	}
	if p := col("cgroup_path").(*array.String); p.Value(0) != "/a" || p.IsValid(1) {
		t.Errorf("paths %q, valid %v", p.Value(0), p.IsValid(1))
	}
	if w := col("weight").(*array.Int32); w.Value(0) != 300 || w.IsValid(1) {
		t.Errorf("weights %d, second valid %v", w.Value(0), w.IsValid(1))
	}
	near("real_mib_per_s", 0, 1.5)
	near("predicted_share", 0, 0.5)
	if n := col("real_requests").(*array.Uint64); n.Value(0) != 3 || n.Value(1) != 1 {
		t.Errorf("real_requests %d %d, want 3 1", n.Value(0), n.Value(1))
	}
	near("real_iops", 0, 375)
	near("real_q2c_p50_s", 0, 0.003)
	near("real_q2c_p99_s", 0, 0.00594)
	near("real_d2c_p50_s", 0, 0.002)
	near("real_d2c_p99_s", 0, 0.00494)
	near("predicted_q2c_p50_s", 0, 0.002)
	near("real_iops", 1, 1/0.003)
	for _, c := range []string{"predicted_q2c_p50_s", "predicted_d2c_p99_s"} {
		if _, ok := f64(c, 1); ok {
			t.Errorf("%s of cgroup 9 is not null: it completed nothing predicted", c)
		}
	}
	if v, _ := f64("predicted_iops", 1); v != 0 {
		t.Errorf("predicted_iops of cgroup 9 = %v, want 0", v)
	}
}
