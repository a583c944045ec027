package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progress draws a one-line progress bar on a terminal's stderr: a bar
// with the share of the input read when its size is known, and the events
// read so far with their rate. Off a terminal, with --progress or when
// stderr is a regular file (a log of a long run that would otherwise look
// hung), it writes the same figures as a plain line every lineEvery
// instead. It is inert otherwise, so callers need not check. It reads the
// wall clock only every 64Ki events.
type progress struct {
	w       io.Writer
	enabled bool
	lines   bool // plain lines, not a redrawn bar
	label   string
	n       uint64
	start   time.Time
	last    time.Time
	drawn   bool
	// bytes reports bytes read and the input's total size (0: unknown).
	bytes func() (done, total int64)
}

// lineEvery is the interval of progress lines off a terminal.
const lineEvery = 5 * time.Second

func newProgress(ios *IOStreams, label string) *progress {
	now := time.Now()
	lines := !ios.ErrTTY && (ios.Progress || ios.ErrFile)
	return &progress{w: ios.ErrOut, enabled: ios.ErrTTY || lines, lines: lines, label: label, start: now, last: now}
}

// progresser is implemented by inputs that know how much of them was read.
type progresser interface {
	Progress() (done, total int64)
}

// track takes the share read from src when src reports it.
func (p *progress) track(src any) {
	if pr, ok := src.(progresser); ok {
		p.bytes = pr.Progress
	}
}

// barWidth is the bar's width in cells.
const barWidth = 30

// Add counts n more events.
func (p *progress) Add(n uint64) {
	p.n += n
	if !p.enabled || p.n>>16 == (p.n-n)>>16 {
		return
	}
	now := time.Now()
	every := 200 * time.Millisecond
	if p.lines {
		every = lineEvery
	}
	if now.Sub(p.last) < every {
		return
	}
	p.last = now
	rate := float64(p.n) / now.Sub(p.start).Seconds() / 1e6
	if p.lines {
		share := ""
		if p.bytes != nil {
			if done, total := p.bytes(); total > 0 {
				share = fmt.Sprintf(", %.0f%% of the input read", 100*min(float64(done)/float64(total), 1))
			}
		}
		fmt.Fprintf(p.w, "tracesched: %s: %d events in %.0f s (%.2f M events/s)%s\n", p.label, p.n, now.Sub(p.start).Seconds(), rate, share)
		return
	}
	bar := ""
	if p.bytes != nil {
		if done, total := p.bytes(); total > 0 {
			frac := min(float64(done)/float64(total), 1)
			full := int(frac * barWidth)
			bar = fmt.Sprintf(" [%s%s] %3.0f%%", strings.Repeat("=", full), strings.Repeat(" ", barWidth-full), 100*frac)
		}
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s%s %d events, %.1f M events/s", p.label, bar, p.n, rate)
	p.drawn = true
}

// Done erases the progress line (off a terminal, lines stay).
func (p *progress) Done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// heartbeat writes, off a terminal with progress lines on (see progress),
// "tracesched: LABEL: N s" every lineEvery until stop is called: phases
// that read no events (scanning the workload, calibrating the device
// model) would otherwise be silent for as long as they take. It is inert
// otherwise. stop waits for the writer to finish, so nothing is written
// after it returns.
func heartbeat(ios *IOStreams, label string) (stop func()) {
	return heartbeatEvery(ios, label, lineEvery)
}

// heartbeatEvery is heartbeat with a line every every.
func heartbeatEvery(ios *IOStreams, label string, every time.Duration) (stop func()) {
	p := newProgress(ios, label)
	if !p.lines {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				fmt.Fprintf(p.w, "tracesched: %s: %.0f s\n", label, now.Sub(start).Seconds())
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
