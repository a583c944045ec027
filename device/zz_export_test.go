package device

import (
	"math/rand/v2"
	"slices"
	"fmt"
	"os"
	"testing"
	"github.com/tracesched/tracesched/trace"
)

var ZZReqs []trace.Request

func ZZDump(reqs []trace.Request, path string) {
	c := prepare(reqs)
	f, _ := os.Create(path)
	defer f.Close()
	fmt.Fprintln(f, "issue,d2c,k,op,bytes,sector,service,hasprev,head")
	for _, s := range c.samples {
		fmt.Fprintf(f, "%d,%.0f,%d,%d,%d,%d,%.0f,%v,%d\n", s.issue, s.d2c, s.k, s.op, s.bytes, s.sector, s.service, s.hasPrev, s.head)
	}
}
var _ = testing.Short

func ZZFloor(reqs []trace.Request) string {
	c := prepare(reqs)
	d := make([]float64, len(c.samples))
	for i, s := range c.samples { d[i] = s.d2c }
	m := mean(d)
	out := ""
	rng := newZZRand()
	for i := 0; i < 2; i++ {
		bs := make([]float64, len(d))
		for j := range bs { bs[j] = d[rng.IntN(len(d))] }
		out += fmt.Sprintf("bootstrap %.3f ", Demerit(d, bs)/m)
	}
	q := QuantilesOf(d, 1024)
	ds := make([]float64, len(d))
	for j := range ds { ds[j] = q.At(rng.Float64()) }
	out += fmt.Sprintf("table %.3f ", Demerit(d, ds)/m)
	s := append([]float64(nil), d...)
	slices.Sort(s)
	for _, p := range []float64{0.5, 0.9, 0.99, 0.995, 0.999, 0.9999, 1} { out += fmt.Sprintf(" p%v=%.0f", p, cdfX(s, p)/1000) }
	return out
}
func newZZRand() *rand.Rand { return rand.New(rand.NewPCG(1, 1)) }
