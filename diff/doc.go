// Package diff compares two block-layer traces of the same workload, the
// real capture and a scheduler model's prediction, and ranks where they part
// ways.
//
// Each trace is first reduced to a Side (Load, or NewSide/Add/Finish): its
// bios, requests and scheduler debug messages, rebuilt by the trace
// package's Rebuilder. A Side keeps its bios and requests compactly, one
// column per field in blocks of a few thousand values coded in a few bytes
// each (internal/column), about 20 and 28 bytes per bio and request on a
// recorded capture instead of a trace.Bio's 80 and a trace.Request's 136,
// so a diff of a 100 M-event capture fits in a few GiB. As the bios arrive
// a Side also accumulates what the bandwidth and process comparisons need
// of it alone (bytes per window, per cgroup and process bytes, spans and
// busy sets: stream.go), so those read no table. Compare then lines the
// two Sides up and measures:
//
//   - identity: bios are matched by (PID, Index), their process and position
//     in that process's stream of bios, so they line up even where the two
//     sides merged them into different requests;
//   - dispatch order: Kendall's tau between the real and the predicted issue
//     order of the matched bios, rank displacements, and the divergences:
//     stretches of the real order where the prediction departs, ranked by
//     severity;
//   - per-cgroup bandwidth: windowed MiB/s and shares on both sides, share
//     error, a fairness figure and the Kolmogorov–Smirnov distance between
//     the per-window throughput distributions;
//   - merges: request merges (back, front) per process, and scheduler queue
//     merges from the debug messages;
//   - think time: each (process, sync) queue classified short or long over
//     time, by recomputing BFQ's think-time statistic from each side's own
//     timing, and compared request by request;
//   - latency: Q2C and D2C distributions and DiskSim's demerit figure;
//   - decisions: the first points where the model's scheduling decisions
//     (queue put in service, expiry reason, idling) differ from the kernel's.
//
// The Result carries everything, with JSON keys fixed by docs/cli.md
// (`replay --json`, `diff --json`), and renders as text (WriteText) or JSON
// (WriteJSON). Output is deterministic: every list is sorted, ties broken by
// ids, and no map order leaks out.
//
// Times are trace.Time (ns since each capture's origin) unless a field says
// otherwise; durations in JSON are in seconds; bandwidth in MiB/s (2^20
// bytes per second).
package diff
