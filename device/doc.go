// Package device models when a block device completes a request, and
// calibrates those models from a capture's issue (D) and complete (C)
// events.
//
// A Model is one of two kinds:
//
//   - KindNonRotational (flash, virtual and loop devices): the service time
//     of a request is Base + PerByte*bytes for its operation class (read,
//     write, other), times its size's factor where the class has Sizes
//     (fitted last, on the chosen model, on the bunches' openers with
//     Batching, where the capture showed two sizes or more often and the
//     line misses one by a quarter or more, and kept where they lower the
//     in-sample demerit, or where they lower the demerit taken apart by
//     class and size both in-sample and on the held-out half of the
//     split; a size between two bands takes their factors interpolated
//     in log size), times a
//     saturation factor 1 + Slope*max(0, k-Parallelism)
//     where k is the number of requests on the device once it is issued,
//     (or the factor measured at k, where the capture showed k often),
//     raised to the class's SatExp where it has one (a class other than
//     the largest whose latency grows otherwise with k),
//     times the class's sequential-stream factor Seq where it has one and
//     the request continues a stream (it starts where one of the last
//     SeqRecent requests issued ended: locality, as a loop device whose
//     host reads its backing file ahead shows it),
//     times a residual multiplier drawn from the class's empirical residual
//     distribution (the sequential requests' own, SeqResidual, with Seq;
//     with Sizes, the table of the band nearest its size);
//     with Hold (fitted with CalibrateOptions.HeldDraws, last, on the
//     chosen model and outside its scoring,
//     where the capture's slowest requests of a class come in spells:
//     those issued, while one of its slowest tenth was on the device,
//     within a range of gaps after it are in that tenth too half the time
//     or more), a request of the class issued within Hold of the one that
//     drew last, while that one is on the device, takes its draw, as a
//     device's slow spell holds every request on it (not with Batching,
//     whose bunches hold them). Below SaturatedBelow (the fewest requests the capture
//     kept on the device for nine tenths of its busy time, when that is 4
//     or more) the capture says nothing of the device, and the model holds
//     its throughput instead of its latency: once the requests on the
//     device, averaged over 10 SaturationWindows (mean D2Cs), fall below
//     it, a request takes max(k, average over one window)/SaturatedBelow
//     of the latency it would have there (a device the workload kept full
//     is read as saturated). With Batching (fitted when the capture's completions
//     come in bunches, as a loop device's worker delivers them), that time
//     only opens a bunch: requests issued at least JoinLead before its
//     instant and within JoinWindow of its opener complete with it, Drain
//     apart; the per-request model is then fitted on the bunches' openers
//     (weighted by bunch size) without in-flight dependence. With PerOp
//     (fitted when the capture's bunches complete one class after the
//     other), each class opens and joins bunches of its own, with its own
//     lead, window and drain. With DepthWindow, the load is not the count
//     k at the issue but the larger of k and the decaying peak of the
//     requests on the device (time constant DepthWindow), rounded up: a
//     closed loop on a device that completes in bunches issues the first
//     requests of each resubmission with few on a device it keeps full.
//     With Curves (fitted with DepthWindow, where the capture shows the
//     device at low depths and some size band over depths a factor 8
//     apart, and kept where they lower the in-sample demerit by a quarter
//     and the cross-validated one at all), the reads and the writes
//     take, instead of the shared factor and its SatExp, the factor of
//     their size band and locality (continuing a stream or not, where the
//     class has curves of both) at that load (DepthCurve: the mean D2C of the band's
//     requests at each load the capture showed often, over their
//     Base+PerByte*bytes; linear in the load between those, the shared
//     factor's shape beyond them; interpolated in log size between bands,
//     the nearest band's outside them), and the residual tables of the
//     nearest band (by load bucket where it has them).
//   - KindRotational (disks): requests are served one at a time in issue
//     order. A random access costs Overhead + seek(distance) + Write (for
//     writes) + PerByte*bytes + a positional delay drawn from the residual
//     distribution (rotation and noise), or uniform in [0, Revolution) when
//     the model has no residual table. seek(d) is SeekSqrt*sqrt(d) below
//     SeekBoundary sectors and SeekLongBase + SeekLongPerSector*d from there
//     on. A sequential access (starting 0 to SeqWindow sectors after the end
//     of the previous one) costs SeqBase + PerByte*bytes + a draw from
//     SeqResidual.
//
// Calibrate fits both kinds from a capture (the first half by time), scores
// each on the second half with Demerit, keeps the better one (rotational
// only when service times grow with seek distance), or the kind the caller
// forces, refits it on the whole capture and reports the fit (a
// non-rotational model that loses to a rotational one only by the count of
// requests as its load measure is refitted with its best measure and
// compared again). Scoring
// replays the capture's own issues and completions through the model:
// every request issued at its real D time with the real set of requests
// on the device. Timing, made by Model.NewDevice, is the replay.Device:
// deterministic for a given seed and sequence of calls, its randomness
// drawn from a math/rand/v2 PCG. Synthesize makes a capture of a known
// model, for devices the recorded captures lack.
//
// CalibrateSeq (and CoverageOfSeq) take the requests as a sequence read
// again for each pass, for a caller that keeps them compactly (a diff
// side's table): on a capture larger than the fit's windows it holds a
// compact summary of every request (about 70 bytes each) and the windows'
// requests, not a slice of all of them and its preparation, and fits the
// same model as Calibrate.
//
// # JSON form
//
// Model.Save writes, and Load reads, this document (version 9; Load also
// reads version 8, the same without "sustained_load_windows" in its
// coverage, version 7, without "size_factors" either, version 6, without
// "behind_bytes" either, version 5, without
// "residual_hold_ns" either, version 4,
// without "depth_window_ns" and "depth_curves" either, version 3, without "sequential_factor" and "sequential_residual"
// either, version 2, without "ahead_per_byte_ns" either, and version 1,
// without "batching" either, as a model without them). Durations
// are integer nanoseconds (suffix _ns), per-byte and per-sector costs are
// nanoseconds as floats, distances are 512-byte sectors. A quantile table
// is {"p": [...], "x": [...]}: value x[i] at probability p[i], p rising from
// 0 to 1 (entries gather where the values change fastest), x
// nondecreasing, interpolated linearly in between; up to 1025 entries.
//
//	{
//	  "version": 9,
//	  "kind": "nonrotational" | "rotational",
//	  "nonrotational": {
//	    "parallelism": 8,            requests the device serves at once
//	    "saturation_slope": 0.11,    latency growth per request beyond parallelism (fraction)
//	    "inflight_factors": [1.4, 1, 1.02, ...],  measured factor at k = 1, 2, ... (optional)
//	    "saturated_below": 26, "saturation_window_ns": 6355291,  throughput held below 26 (optional)
//	    "depth_window_ns": 560344,   load: max(k, decaying peak of the requests on the device) (optional)
//	    "depth_curves": [{"op": "read", "sequential": false, "bytes": 4096, "depths": [1, 2, ...],
//	                      "factors": [0.6, 0.8, ...], "n": 76264,
//	                      "residual": {...}, "residual_by_inflight": [...]}, ...],  per class and size band
//	                      (optional; read before write, random before sequential, bytes rising;
//	                      at most 64 curves of 1024 points)
//	    "read":  {"base_ns": 52000, "per_byte_ns": 0.8, "n": 1200,
//	              "saturation_exponent": 0.2,  the class's own power of the factor (optional; 0 or absent: 1)
//	              "ahead_per_byte_ns": 0.55,   wait per byte on the device ahead (optional; then no saturation)
//	              "sequential_factor": 0.21,   factor of a request continuing a stream (optional; 0 or absent: none)
//	              "sequential_residual": {...}, their multipliers (with sequential_factor)
//	              "residual_hold_ns": 1000000,  a draw holds for the class's requests issued within it (optional; 0 or absent: none; at most 30 s)
//	              "size_factors": [{"bytes": 4096, "factor": 0.25, "n": 32966, "residual": {...}}, ...],
//	                  the mean latency at each size the capture showed often over the line's, and the
//	                  residual table of the requests nearest it (optional; bytes rising; read and write)
//	              "residual": {"p": [0, ...], "x": [0.61, ...]}},  multipliers, mean about 1
//	    "write": {...}, "other": {...}         absent when the capture had none
//	    "batching": {"join_lead_ns": 86000, "join_window_ns": 400000, "drain_ns": 780,
//	                 "bunch_gap_ns": 5000, "bunches": 9222, "joined_fraction": 0.93,  optional
//	                 "per_op": true, "op_drain_ns": [840, 1523, 0],   bunches per class (optional)
//	                 "op_join_lead_ns": [86698, 123616, 0], "op_join_window_ns": [183078, 179771, 0]}
//	  },
//	  "rotational": {
//	    "overhead_ns": 300000, "seek_sqrt_ns": 40.5, "seek_boundary_sectors": 2000000,
//	    "seek_long_base_ns": 5000000, "seek_long_per_sector_ns": 0.0011,
//	    "revolution_ns": 8333333, "per_byte_ns": 8.1, "write_ns": 0,
//	    "seq_window_sectors": 128, "seq_base_ns": 150000,
//	    "residual_ns": {"p": [...], "x": [...]}, "seq_residual_ns": {...}  nanoseconds
//	  },
//	  "coverage": {"requests": 137924, "depth_buckets": [3632, 5419, ...], "max_depth": 32,
//	               "ops": [{"op": "read", "requests": 137924, "min_bytes": 4096, "max_bytes": 4096}],
//	               "sustained_load_windows": [1, 0, ..., 105, 27, 0, ...],  10 ms windows by their
//	                   average load, quarter octaves from 1 request (41 entries; optional)
//	               "sources": ["..."]}   what the calibration saw (optional)
//	}
//
// Only the section named by kind is required; Load rejects other versions.
package device
