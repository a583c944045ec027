package diff

// Result is the whole comparison of a prediction against the real trace.
// The JSON keys of the fields named in docs/cli.md (`replay --json`,
// `diff --json`) are part of the command-line contract; the other keys add
// detail. Fields tagged `json:"-"` are for in-process consumers (the TUI).
type Result struct {
	// Mode is ModeValidate, or ModeWhatIf when Options.Changes named a
	// change; RecordedScheduler the scheduler that recorded the capture
	// ("" unknown); Change the what-if lead (null in validate mode).
	Mode              string  `json:"mode"`
	RecordedScheduler string  `json:"recorded_scheduler"`
	Change            *Change `json:"change"`

	Scheduler        string  `json:"scheduler"`         // the predicted side's scheduler (else the real side's)
	Kernel           string  `json:"kernel"`            // the predicted side's kernel version (else the real side's)
	Requests         int     `json:"requests"`          // requests in the real trace
	WallSeconds      float64 `json:"wall_seconds"`      // the real trace's active span, s (first Q to last C)
	SimulatedSeconds float64 `json:"simulated_seconds"` // the prediction's active span, s

	PredictedRequests int       `json:"predicted_requests"` // requests in the prediction
	Identity          Identity  `json:"identity"`
	DispatchOrder     Order     `json:"dispatch_order"`
	Cgroups           []Cgroup  `json:"cgroups"`   // by id
	Processes         []Process `json:"processes"` // by pid
	Bandwidth         Bandwidth `json:"bandwidth"`
	Merges            Merges    `json:"merges"`
	ThinkTime         ThinkTime `json:"think_time"`
	Latency           Latency   `json:"latency"`
	Decisions         Decisions `json:"decisions"`
	// DeviceExtrapolation states, one sentence each, where the prediction
	// drove the device model beyond what its calibration saw (depths,
	// sizes, operations); set by the caller that knows the model, empty
	// when it stayed inside.
	DeviceExtrapolation []string `json:"device_extrapolation"`
	// Seeds is the range of the predicted figures over the device model's
	// seeds when the caller replayed at several (Spread); nil otherwise.
	Seeds *SeedSpread `json:"seeds,omitempty"`

	// RealSide and PredSide are the compared Sides; the indexes in
	// DispatchOrder sequences, Divergence served lists and BioRefs point
	// at their bios (Side.BioAt).
	RealSide *Side `json:"-"`
	PredSide *Side `json:"-"`
}

// Compare compares a prediction with the real trace. Both Sides must be
// finished; neither is modified. Compare is deterministic: the same inputs
// give the same Result.
func Compare(real, pred *Side, opts Options) *Result {
	real.finish()
	pred.finish()
	opts = opts.withDefaults()
	rp, pp := real.prepared(), pred.prepared()
	r := &Result{
		Mode:              ModeValidate,
		RecordedScheduler: opts.RecordedScheduler,
		Scheduler:         pred.schedulerName(),
		Kernel:            pred.Meta.Kernel,
		Requests:          real.NumRequests(),
		PredictedRequests: pred.NumRequests(),
		WallSeconds:       spanSeconds(rp.first, rp.last),
		SimulatedSeconds:  spanSeconds(pp.first, pp.last),
		RealSide:          real,
		PredSide:          pred,
	}
	if r.Scheduler == "" {
		r.Scheduler = real.schedulerName()
	}
	if r.Kernel == "" {
		r.Kernel = real.Meta.Kernel
	}
	rIdx, pIdx, id := matchBios(real, pred)
	r.DispatchOrder = compareOrder(real, pred, rIdx, pIdx, opts)
	id.Ordered = r.DispatchOrder.Bios
	r.Identity = id
	if r.DispatchOrder.Ranked == nil {
		r.DispatchOrder.Ranked = []Divergence{}
	}
	r.Cgroups, r.Bandwidth = compareBandwidth(real, pred, opts)
	var pw contention
	r.Processes, pw = compareProcesses(real, pred, opts)
	r.Bandwidth.ProcessWindowReal, r.Bandwidth.ProcessWindowPred = pw.real.seconds(), pw.pred.seconds()
	r.Bandwidth.ComparedProcesses = append([]uint64{}, pw.keys...)
	r.Bandwidth.WindowFallback = r.Bandwidth.WindowFallback || pw.fallback
	r.Merges = compareMerges(real, pred)
	r.ThinkTime = compareThink(real, pred, rIdx, pIdx, opts)
	r.Latency = compareLatency(real, pred)
	r.Decisions = compareDecisions(real, pred, opts)
	r.DeviceExtrapolation = []string{}
	if len(opts.Changes) > 0 {
		r.Mode = ModeWhatIf
		r.Change = r.whatIf(opts)
	}
	return r
}
