package report

import (
	"fmt"
	"html"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/report/svgplot"
)

// Run describes how the compared traces were made: what the report's
// first section shows. Every field is optional.
type Run struct {
	// Commands are the command lines that reproduce the run, in order, as
	// a POSIX shell takes them (see ShellQuote).
	Commands []string
	Inputs   []Input
	// Scheduler, Kernel and Mode name the model replayed through, the
	// kernel version it behaved as and the loop mode ("closed", "open").
	Scheduler, Kernel, Mode string
	Tunables                map[string]string // --set NAME=VALUE
	Weights                 map[uint64]int    // cgroup id -> weight
	Features                map[string]bool   // --feature NAME=on|off
	Seed                    uint64            // the device model's seed (0: not shown)
	HZ                      int               // tick rate (0: not shown)
	Queue                   string            // the modelled queue ("rotational, depth 32, ...")
	Device                  string            // the device model, one line
	Fit                     *DeviceFit        // its calibration; nil when it was loaded or unknown
	Build                   string            // the program's version and build
	// Notes are shown under the parameters, one a line.
	Notes []string
	// DivergenceThreshold is the mean |displacement| (ranks) above which
	// the diff called a window divergent (0: diff's default, 4).
	DivergenceThreshold float64
}

// Input is one input file of the run.
type Input struct {
	Role  string // "capture", "predicted"
	Name  string // as given on the command line
	Bytes int64  // size on disk (0: unknown, or a set of files)
}

// DeviceFit is a device model's calibration as the report shows it
// (device.Fit, copied by the caller).
type DeviceFit struct {
	Kind            string
	Forced          bool
	N, Skipped      int           // requests fitted, requests skipped
	MeanD2C         time.Duration // the capture's mean D2C
	ModelMeanD2C    time.Duration // the model's, each request issued at its real D time
	Demerit         time.Duration // in-sample D2C demerit
	DemeritFraction float64       // Demerit / MeanD2C
	CV              FitScore      // cross-validation of the chosen kind
	Candidates      []FitScore    // every kind considered
	// GapUnder, GapReal, GapModel: the fraction of gaps between
	// consecutive completions shorter than each threshold, in the capture
	// and in the model.
	GapUnder          []time.Duration
	GapReal, GapModel []float64
	// Summary is the fit's own text (device.Fit.String), shown verbatim.
	Summary string
}

// FitScore is one cross-validated score of a kind of device model.
type FitScore struct {
	Kind            string
	Train, Test     int
	Demerit         time.Duration
	DemeritFraction float64 // Demerit / the scored requests' mean D2C
	HalvesFraction  float64 // demerit between the capture's own halves / mean D2C
}

// Chart is one figure of the report.
type Chart struct {
	Name    string // file name stem, unique in the report: "bandwidth-cgroups"
	Title   string
	Caption string // one or two sentences under the chart
	plot    interface{ SVG(standalone bool) string }
	data    *table // the plotted numbers
}

// SVG returns the chart as SVG text; standalone for an .svg file of its
// own (XML declaration, namespace, style), else for inline use in the
// report's page.
func (c *Chart) SVG(standalone bool) string { return c.plot.SVG(standalone) }

// Report is a rendered report.
type Report struct {
	res    *diff.Result
	run    Run
	charts []*Chart
	nav    [][2]string // section id, title
	body   strings.Builder
	comm   map[uint32]string // pid -> process name (comms)
}

// Limits on what the page lists.
const (
	topCgroups        = 7  // cgroups drawn by name; the rest are "other"
	topProcesses      = 6  // processes drawn by name
	topLatencyCgs     = 6  // cgroups with latency CDFs
	topQueues         = 8  // think-time queues drawn
	queueRows         = 24 // think-time table rows
	divergenceRows    = 10 // divergences listed and marked
	decisionStretches = 5  // divergences whose decisions are shown
	decisionsShown    = 14 // decision rows per side and stretch
	mismatchRows      = 20 // decision mismatches listed
	processRows       = 12 // per-process table rows
)

// New renders the report of res. res must come from diff.Compare (its
// RealSide and PredSide set). New does not modify res.
func New(res *diff.Result, run Run) *Report {
	if run.DivergenceThreshold <= 0 {
		run.DivergenceThreshold = 4
	}
	r := &Report{res: res, run: run}
	r.runSection()
	r.whatIfSection()
	r.bandwidthSection()
	r.latencySection()
	r.orderSection()
	r.thinkSection()
	r.decisionSection()
	r.deviceSection()
	return r
}

// Charts returns the report's charts, in page order.
func (r *Report) Charts() []*Chart { return r.charts }

// WriteHTML writes the page.
func (r *Report) WriteHTML(w io.Writer) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString(`<meta name="viewport" content="width=device-width, initial-scale=1">` + "\n")
	b.WriteString(`<meta name="color-scheme" content="light dark">` + "\n")
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(r.title()))
	b.WriteString("<style>\n" + pageStyle + svgplot.Style + "</style>\n</head>\n<body>\n")
	fmt.Fprintf(&b, "<header><h1>%s</h1>\n<nav>", esc(r.title()))
	for i, n := range r.nav {
		if i > 0 {
			b.WriteString(" · ")
		}
		fmt.Fprintf(&b, `<a href="#%s">%s</a>`, n[0], esc(n[1]))
	}
	b.WriteString("</nav></header>\n<main>\n")
	b.WriteString(r.body.String())
	b.WriteString("</main>\n<footer>Generated by tracesched")
	if r.run.Build != "" {
		b.WriteString(" " + esc(r.run.Build))
	}
	b.WriteString(". Self-contained: no scripts, no external resources.</footer>\n</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func (r *Report) title() string {
	s := "tracesched report"
	sched := r.run.Scheduler
	if sched == "" {
		sched = r.res.Scheduler
	}
	if sched != "" {
		s += ": " + sched
		k := r.run.Kernel
		if k == "" {
			k = r.res.Kernel
		}
		if k != "" {
			s += " (kernel " + k + ")"
		}
	}
	for _, in := range r.run.Inputs {
		if in.Role == "capture" {
			s += " on " + baseName(in.Name)
			break
		}
	}
	return s
}

func baseName(p string) string {
	p = strings.TrimRight(p, "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

const pageStyle = `:root{color-scheme:light dark;--bg:#ffffff;--fg:#1a1a1a;--muted:#5a5a5a;--rule:#d8d8d8;--code:#f3f3f3;--card:#f6f7f9;--link:#0b62a8}
@media (prefers-color-scheme:dark){:root{--bg:#17181a;--fg:#e6e6e6;--muted:#a8a8a8;--rule:#3a3c40;--code:#232528;--card:#202226;--link:#7cc0f5}}
body{background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0 auto;max-width:1100px;padding:0 20px 40px}
h1{font-size:22px;margin:22px 0 6px}h2{font-size:19px;margin:34px 0 8px;border-bottom:1px solid var(--rule);padding-bottom:4px}h3{font-size:16px;margin:22px 0 6px}
a{color:var(--link)}nav{font-size:14px;color:var(--muted)}
p.note,figcaption,footer{color:var(--muted);font-size:13.5px}
footer{margin-top:40px;border-top:1px solid var(--rule);padding-top:8px}
pre,code{font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:13px}
pre{background:var(--code);padding:8px 10px;border-radius:4px;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
table{border-collapse:collapse;margin:8px 0 14px;font-size:13.5px}
th,td{padding:3px 9px;border-bottom:1px solid var(--rule);text-align:left;vertical-align:top}
th{font-weight:600}td:first-child{white-space:nowrap}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
table.kv th{color:var(--muted);font-weight:500;white-space:nowrap}
figure{margin:14px 0 20px}svg.plot{width:100%;height:auto;display:block;max-width:1000px}
details{margin:4px 0 10px}summary{cursor:pointer;color:var(--muted);font-size:13.5px}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:10px 0}
.card{background:var(--card);border:1px solid var(--rule);border-radius:6px;padding:8px 12px;min-width:150px}
.card b{display:block;font-size:20px;font-variant-numeric:tabular-nums}.card span{color:var(--muted);font-size:12.5px}
.diverge{color:#c0392b;font-weight:600}@media (prefers-color-scheme:dark){.diverge{color:#ff7b6b}}
.stretch{border-left:3px solid var(--rule);padding-left:12px;margin:14px 0}
.side{display:grid;grid-template-columns:1fr 1fr;gap:16px}@media (max-width:800px){.side{grid-template-columns:1fr}}
`

// esc escapes text for HTML.
func esc(s string) string { return html.EscapeString(s) }

// section starts a section.
func (r *Report) section(id, title string) {
	r.nav = append(r.nav, [2]string{id, title})
	fmt.Fprintf(&r.body, "<section id=\"%s\">\n<h2>%s</h2>\n", id, esc(title))
}

func (r *Report) endSection() { r.body.WriteString("</section>\n") }

func (r *Report) p(format string, args ...any) {
	fmt.Fprintf(&r.body, "<p class=\"note\">%s</p>\n", fmt.Sprintf(format, args...))
}

// figure adds a chart, inline, with its caption and data table.
func (r *Report) figure(c *Chart) {
	r.charts = append(r.charts, c)
	fmt.Fprintf(&r.body, "<figure id=\"fig-%s\">\n%s\n<figcaption>%s</figcaption>\n", c.Name, c.SVG(false), esc(c.Caption))
	if c.data != nil && len(c.data.rows) > 0 {
		fmt.Fprintf(&r.body, "<details><summary>Data (%d rows)</summary>\n", len(c.data.rows))
		c.data.write(&r.body)
		r.body.WriteString("</details>\n")
	}
	r.body.WriteString("</figure>\n")
}

// table is a table of text cells; numeric columns are right-aligned.
type table struct {
	head    []string
	numeric []bool
	rows    [][]string
	class   string
}

func newTable(head ...string) *table {
	return &table{head: head, numeric: make([]bool, len(head))}
}

// isNumber reports whether a cell holds a number ("1.5", "+0.2", "12 %",
// "–" for none): such cells are right-aligned.
func isNumber(c string) bool {
	if c == "–" {
		return true
	}
	_, err := strconv.ParseFloat(strings.TrimSuffix(c, " %"), 64)
	return err == nil
}

// alignNumbers marks the columns whose every cell is a number.
func (t *table) alignNumbers() {
	for i := range t.numeric {
		t.numeric[i] = len(t.rows) > 0
		for _, row := range t.rows {
			if i < len(row) && !isNumber(row[i]) {
				t.numeric[i] = false
				break
			}
		}
	}
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(b *strings.Builder) {
	t.alignNumbers()
	if t.class != "" {
		fmt.Fprintf(b, "<table class=\"%s\">", t.class)
	} else {
		b.WriteString("<table>")
	}
	if len(t.head) > 0 {
		b.WriteString("<thead><tr>")
		for i, h := range t.head {
			if t.numeric[i] {
				fmt.Fprintf(b, "<th class=\"n\">%s</th>", esc(h))
			} else {
				fmt.Fprintf(b, "<th>%s</th>", esc(h))
			}
		}
		b.WriteString("</tr></thead>")
	}
	b.WriteString("<tbody>\n")
	for _, row := range t.rows {
		b.WriteString("<tr>")
		for i, c := range row {
			if i < len(t.numeric) && t.numeric[i] {
				fmt.Fprintf(b, "<td class=\"n\">%s</td>", esc(c))
			} else {
				fmt.Fprintf(b, "<td>%s</td>", esc(c))
			}
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody></table>\n")
}

func (r *Report) table(t *table) { t.write(&r.body) }

// kv writes a two-column table of names and values; values are HTML.
func (r *Report) kv(rows [][2]string) {
	r.body.WriteString("<table class=\"kv\"><tbody>\n")
	for _, kv := range rows {
		fmt.Fprintf(&r.body, "<tr><th>%s</th><td>%s</td></tr>\n", esc(kv[0]), kv[1])
	}
	r.body.WriteString("</tbody></table>\n")
}

// f formats v with prec decimals; "–" for NaN.
func f(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

func pct(v float64) string { return f(100*v, 1) + " %" }

// ShellQuote quotes args for a POSIX shell, leaving plain words bare.
func ShellQuote(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		plain := a != ""
		for _, c := range a {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_-./:=,+@%", c)) {
				plain = false
				break
			}
		}
		if plain {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// cgLabel names a cgroup: its path, else its id.
func cgLabel(id uint64, path string) string {
	if path != "" {
		return path
	}
	if id == 0 {
		return "cgroup 0 (none)"
	}
	return "cgroup " + strconv.FormatUint(id, 10)
}

func (r *Report) cgPath(id uint64) string {
	for _, c := range r.res.Cgroups {
		if c.ID == id {
			return c.Path
		}
	}
	for _, s := range []*diff.Side{r.res.RealSide, r.res.PredSide} {
		if s != nil {
			if p := s.Meta.Cgroups[id]; p != "" {
				return p
			}
		}
	}
	return ""
}

func (r *Report) runSection() {
	res, run := r.res, &r.run
	r.section("run", "Run")
	if len(run.Commands) > 0 {
		r.body.WriteString("<h3>Command line</h3>\n")
		fmt.Fprintf(&r.body, "<pre>%s</pre>\n", esc(strings.Join(run.Commands, "\n")))
	}
	var rows [][2]string
	add := func(k, v string) {
		if v != "" {
			rows = append(rows, [2]string{k, v})
		}
	}
	sched := run.Scheduler
	if sched == "" {
		sched = res.Scheduler
	}
	kernel := run.Kernel
	if kernel == "" {
		kernel = res.Kernel
	}
	add("scheduler", esc(sched))
	add("kernel", esc(kernel))
	add("mode", esc(run.Mode))
	if len(run.Tunables) > 0 {
		var s []string
		for _, k := range slices.Sorted(maps.Keys(run.Tunables)) {
			s = append(s, k+"="+run.Tunables[k])
		}
		add("settings", "<code>"+esc(strings.Join(s, " "))+"</code>")
	}
	if len(run.Weights) > 0 {
		var s []string
		for _, id := range slices.Sorted(maps.Keys(run.Weights)) {
			l := strconv.FormatUint(id, 10)
			if p := r.cgPath(id); p != "" {
				l += " (" + p + ")"
			}
			s = append(s, fmt.Sprintf("%s: %d", l, run.Weights[id]))
		}
		add("cgroup weights", esc(strings.Join(s, ", ")))
	}
	if len(run.Features) > 0 {
		var s []string
		for _, k := range slices.Sorted(maps.Keys(run.Features)) {
			v := "off"
			if run.Features[k] {
				v = "on"
			}
			s = append(s, k+"="+v)
		}
		add("features", "<code>"+esc(strings.Join(s, " "))+"</code>")
	}
	if run.Seed != 0 {
		add("seed", strconv.FormatUint(run.Seed, 10))
	}
	if run.HZ != 0 {
		add("HZ", strconv.Itoa(run.HZ))
	}
	add("queue", esc(run.Queue))
	add("device model", esc(run.Device))
	for _, in := range run.Inputs {
		v := "<code>" + esc(in.Name) + "</code>"
		if in.Bytes > 0 {
			v += fmt.Sprintf(" (%s bytes)", groupDigits(in.Bytes))
		}
		add(in.Role, v)
	}
	add("real trace", fmt.Sprintf("%d requests, %d bios, %d scheduler messages, active %.3f s", res.Requests, lenBios(res.RealSide), lenMsgs(res.RealSide), res.WallSeconds))
	add("prediction", fmt.Sprintf("%d requests, %d bios, %d scheduler messages, active %.3f s", res.PredictedRequests, lenBios(res.PredSide), lenMsgs(res.PredSide), res.SimulatedSeconds))
	id := res.Identity
	add("bios lined up", fmt.Sprintf("%d matched by (process, position), %d only real, %d only predicted; %d ranked by issue order", id.Matched, id.RealOnly, id.PredictedOnly, id.Ordered))
	add("build", esc(run.Build))
	r.kv(rows)
	for _, n := range run.Notes {
		r.p("%s", esc(n))
	}

	// The headline figures: in a what-if they follow the change (see
	// whatIfSection), below it.
	if r.whatIf() {
		r.endSection()
		return
	}
	r.headlineCards("Headline figures")
	r.endSection()
}

// whatIf reports whether the report leads with a what-if section.
func (r *Report) whatIf() bool { return r.res.Mode == diff.ModeWhatIf && r.res.Change != nil }

// headlineCards writes the diff's headline figures under title.
func (r *Report) headlineCards(title string) {
	res := r.res
	worst := "no cgroups"
	for _, c := range res.Cgroups {
		if c.ID == res.Bandwidth.WorstCgroup {
			worst = cgLabel(c.ID, c.Path)
		}
	}
	cards := [][2]string{
		{f(res.DispatchOrder.KendallTau, 4), fmt.Sprintf("dispatch order Kendall tau; %d divergences", res.DispatchOrder.Divergences)},
		{f(res.Bandwidth.WorstShareError, 4), "worst cgroup share error (" + worst + ")"},
		{f(res.Bandwidth.Fairness, 3), "fairness of the model's slowdowns over cgroups"},
		{pct(res.ThinkTime.Agreement), fmt.Sprintf("think-time classes agree (%d requests)", res.ThinkTime.Compared)},
		{pct(res.Latency.D2CDemerit), "D2C demerit (of the real mean)"},
		{pct(res.Latency.Q2CDemerit), "Q2C demerit (of the real mean)"},
	}
	fmt.Fprintf(&r.body, "<h3>%s</h3>\n<div class=\"cards\">", esc(title))
	for _, c := range cards {
		fmt.Fprintf(&r.body, "<div class=\"card\"><b>%s</b><span>%s</span></div>", esc(c[0]), esc(c[1]))
	}
	r.body.WriteString("</div>\n")
}

func lenBios(s *diff.Side) int {
	if s == nil {
		return 0
	}
	return s.NumBios()
}

func lenMsgs(s *diff.Side) int {
	if s == nil {
		return 0
	}
	return s.Messages.Len()
}

func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
