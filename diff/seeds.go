package diff

import (
	"cmp"
	"slices"
)

// SeedSpread is how a prediction's headline figures move with the device
// model's seed (its random draws): the same replay made again at other
// seeds (tracesched replay --seeds N). A figure whose range is wide turns
// on where single draws fall (an injection, a preemption), and one replay
// does not pin it down. Each Range is over every seed, the Result's own
// included.
type SeedSpread struct {
	Seeds     []uint64       `json:"seeds"`     // the seeds, the Result's own first
	Cgroups   []FigureSpread `json:"cgroups"`   // the compared cgroups of the Result, by id
	Processes []FigureSpread `json:"processes"` // its compared processes, by pid
}

// Varied reports whether sp holds more than one seed's prediction: a
// range worth showing (nil: the replay was made once).
func (sp *SeedSpread) Varied() bool { return sp != nil && len(sp.Seeds) > 1 }

// FigureSpread is one cgroup's or process's predicted contention-window
// figures (Cgroup, Process) over the seeds.
type FigureSpread struct {
	ID    uint64 `json:"id"`   // the cgroup id, or the pid
	Name  string `json:"name"` // the cgroup path, or the command
	MiBps Range  `json:"mib_per_s"`
	Share Range  `json:"share"`       // 0..1
	P50   Range  `json:"p50_seconds"` // Q2C, s
}

// Range is the least, the median (the lower middle one for an even count)
// and the largest of a figure over the seeds.
type Range struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

func rangeOf(xs []float64) Range {
	s := slices.Clone(xs)
	slices.Sort(s)
	return Range{Min: s[0], Median: s[(len(s)-1)/2], Max: s[len(s)-1]}
}

// Spread gathers the predicted figures of rs, one Result per seed (rs[i]
// made at seeds[i]; rs[0] the one reported), for the cgroups and
// processes rs[0] compares. A cgroup or process that another seed's
// prediction lacks counts 0 there (it completed nothing in that window).
func Spread(seeds []uint64, rs []*Result) *SeedSpread {
	if len(rs) == 0 || len(seeds) != len(rs) {
		return nil
	}
	sp := &SeedSpread{Seeds: slices.Clone(seeds)}
	for _, c := range rs[0].Cgroups {
		if c.Compared {
			sp.Cgroups = append(sp.Cgroups, spreadOf(c.ID, c.Path, rs, func(r *Result) (float64, float64, float64) {
				i, ok := slices.BinarySearchFunc(r.Cgroups, c.ID, func(x Cgroup, id uint64) int { return cmp.Compare(x.ID, id) })
				if !ok {
					return 0, 0, 0
				}
				x := &r.Cgroups[i]
				return x.PredMiBps, x.PredShare, x.PredP50
			}))
		}
	}
	for _, p := range rs[0].Processes {
		if p.Compared {
			sp.Processes = append(sp.Processes, spreadOf(uint64(p.PID), p.Comm, rs, func(r *Result) (float64, float64, float64) {
				i, ok := slices.BinarySearchFunc(r.Processes, p.PID, func(x Process, pid uint32) int { return cmp.Compare(x.PID, pid) })
				if !ok {
					return 0, 0, 0
				}
				x := &r.Processes[i]
				return x.PredMiBps, x.PredShare, x.PredP50
			}))
		}
	}
	return sp
}

// spreadOf is the FigureSpread of one cgroup or process whose predicted
// MiB/s, share and p50 in a Result fig gives.
func spreadOf(id uint64, name string, rs []*Result, fig func(*Result) (mib, share, p50 float64)) FigureSpread {
	var mib, share, p50 []float64
	for _, r := range rs {
		m, s, p := fig(r)
		mib, share, p50 = append(mib, m), append(share, s), append(p50, p)
	}
	return FigureSpread{ID: id, Name: name, MiBps: rangeOf(mib), Share: rangeOf(share), P50: rangeOf(p50)}
}
