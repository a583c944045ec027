package main

import (
	"io"

	"github.com/tracesched/tracesched/trace"
	"github.com/tracesched/tracesched/trace/arrowfile"
	"github.com/tracesched/tracesched/trace/parquetfile"
)

// convert's output formats (--format).
const (
	formatArrow   = "arrow"
	formatParquet = "parquet"
)

// requestSink and eventSink are what convert needs of a writer: the Arrow
// and Parquet writers of trace/arrowfile and trace/parquetfile.
type requestSink interface {
	Write(*trace.Request) error
	SetMeta(trace.Meta)
	Close() error
}

type eventSink interface {
	Write(*trace.Event) error
	SetMeta(trace.Meta)
	Close() error
}

func newRequestSink(w io.Writer, format string) (requestSink, error) {
	if format == formatParquet {
		return parquetfile.NewRequestWriter(w, trace.Meta{})
	}
	return arrowfile.NewRequestWriter(w, trace.Meta{})
}

func newEventSink(w io.Writer, format string) (eventSink, error) {
	if format == formatParquet {
		return parquetfile.NewEventWriter(w, trace.Meta{})
	}
	return arrowfile.NewEventWriter(w, trace.Meta{})
}
