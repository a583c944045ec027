// Package report renders a diff.Result as one self-contained HTML page, for
// a mailing-list post or a bug report: the run's parameters and the command
// line that reproduces it, then one section per measure with charts (inline
// SVG drawn by svgplot) and tables of the same numbers.
//
// Sections, in page order:
//
//   - run: scheduler, kernel, mode, tunables, weights, seed, inputs, the
//     command line, the build; the headline figures;
//   - bandwidth: MiB/s per cgroup and per process over time, real
//     (solid) against predicted (dashed), the top divergences marked;
//   - latency: Q2C and D2C CDFs per cgroup;
//   - dispatch order: real rank against predicted rank (a heat map of
//     counts), the mean |displacement| along the real order, divergences
//     marked and listed;
//   - think time: each sync queue's class (short, long) over time on both
//     sides; request and queue merges over time;
//   - decisions: the scheduler decisions (queue selected, expiry reason,
//     idling) on both sides over the stretches of the top divergences;
//   - device: the device model's calibration figures, completion gaps,
//     and D2C by request size.
//
// The page fetches nothing: no scripts, fonts, images or style sheets from
// anywhere; its CSS is inline and follows prefers-color-scheme. Its size
// does not grow with the traces: every chart aggregates (time windows, rank
// bins, quantiles, the top processes and cgroups) to a few hundred points
// per series, and every list is capped.
//
// Times are seconds since each trace's origin; bandwidth is MiB/s (2^20
// bytes per second); latencies are milliseconds.
package report
