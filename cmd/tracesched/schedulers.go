package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/scheduler/bfq"
	"github.com/tracesched/tracesched/scheduler/cfq"
	"github.com/tracesched/tracesched/scheduler/mqdeadline"
	"github.com/tracesched/tracesched/scheduler/none"
	"github.com/tracesched/tracesched/trace"
)

// schedModel describes one scheduler model the command can replay through.
type schedModel struct {
	name     string
	kernels  []string // --kernel presets, oldest first; empty when the model has none
	kernel   string   // default preset
	features func() []featureInfo
	new      func(h replay.Host, o replay.Options) (replay.Scheduler, error)
}

type featureInfo struct {
	name, doc, kernels string
}

func schedModels() []schedModel {
	return []schedModel{
		{name: "none", new: func(h replay.Host, o replay.Options) (replay.Scheduler, error) { return none.New(h, o) }},
		{name: "mq-deadline", new: func(h replay.Host, o replay.Options) (replay.Scheduler, error) { return mqdeadline.New(h, o) }},
		{
			name: "bfq", kernels: bfq.Kernels(), kernel: "6.18",
			features: func() []featureInfo {
				var out []featureInfo
				for _, f := range bfq.Features() {
					out = append(out, featureInfo{f.Name, f.Description, strings.Join(f.Kernels, " ")})
				}
				return out
			},
			new: func(h replay.Host, o replay.Options) (replay.Scheduler, error) { return bfq.New(h, o) },
		},
		{
			name: "cfq", kernels: []string{cfq.Kernel413, cfq.Kernel419}, kernel: cfq.Kernel419,
			features: func() []featureInfo {
				var out []featureInfo
				for _, f := range cfq.Features() {
					var on []string
					for k, v := range f.Kernels {
						if v {
							on = append(on, k)
						}
					}
					sort.Strings(on)
					out = append(out, featureInfo{f.Name, f.Doc, strings.Join(on, " ")})
				}
				return out
			},
			new: func(h replay.Host, o replay.Options) (replay.Scheduler, error) { return cfq.New(h, o) },
		},
	}
}

// findSched returns the model called name.
func findSched(name string) (schedModel, error) {
	var names []string
	for _, m := range schedModels() {
		if m.name == name {
			return m, nil
		}
		names = append(names, m.name)
	}
	return schedModel{}, usagef("unknown scheduler %q (want %s)", name, strings.Join(names, ", "))
}

// featureTable renders a model's features for --list-features.
func featureTable(m schedModel) string {
	var b strings.Builder
	if m.features == nil {
		fmt.Fprintf(&b, "%s has no historical features\n", m.name)
		return b.String()
	}
	fmt.Fprintf(&b, "%s kernels: %s (default %s)\n\n", m.name, strings.Join(m.kernels, " "), m.kernel)
	for _, f := range m.features() {
		on := f.kernels
		if on == "" {
			on = "none (off by default)"
		}
		fmt.Fprintf(&b, "%s\n    %s\n    on in: %s\n", f.name, f.doc, on)
	}
	return b.String()
}

// checkOptions builds the model once on an inert host, so that a bad
// --set, --kernel or --feature is a usage error reported before the
// capture is read.
func checkOptions(m schedModel, o replay.Options, q replay.Queue) error {
	if _, err := m.new(inertHost{q}, o); err != nil {
		return &usageError{err}
	}
	return nil
}

// inertHost is a replay.Host that does nothing: enough to construct a model.
type inertHost struct{ q replay.Queue }

func (inertHost) ArmTimer(int, trace.Time)               {}
func (inertHost) CancelTimer(int)                        {}
func (inertHost) Kick()                                  {}
func (inertHost) Log(trace.Time, uint32, uint64, string) {}
func (inertHost) InDriver() int                          { return 0 }
func (h inertHost) Queue() replay.Queue                  { return h.q }
