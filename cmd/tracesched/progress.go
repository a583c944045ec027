package main

import (
	"fmt"
	"io"
	"time"
)

// progress draws a one-line event counter on a terminal's stderr. It is
// inert unless enabled, so callers need not check. It reads the wall clock
// only every 64Ki events.
type progress struct {
	w       io.Writer
	enabled bool
	label   string
	n       uint64
	start   time.Time
	last    time.Time
	drawn   bool
}

func newProgress(ios *IOStreams, label string) *progress {
	now := time.Now()
	return &progress{w: ios.ErrOut, enabled: ios.ErrTTY, label: label, start: now, last: now}
}

// Add counts n more events.
func (p *progress) Add(n uint64) {
	p.n += n
	if !p.enabled || p.n>>16 == (p.n-n)>>16 {
		return
	}
	now := time.Now()
	if now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last = now
	secs := now.Sub(p.start).Seconds()
	fmt.Fprintf(p.w, "\r\x1b[K%s: %d events, %.1f M events/s", p.label, p.n, float64(p.n)/secs/1e6)
	p.drawn = true
}

// Done erases the progress line.
func (p *progress) Done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}
