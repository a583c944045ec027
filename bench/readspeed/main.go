// Command readspeed reads every event of an INPUT with parse/blktrace and
// prints how many it read and how fast, for side-by-side runs against
// blkparse (bench/parse.sh).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tracesched/tracesched/parse/blktrace"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: readspeed INPUT")
		os.Exit(2)
	}
	start := time.Now()
	in, err := blktrace.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "readspeed:", err)
		os.Exit(1)
	}
	defer in.Close()
	var n, bytes uint64
	for {
		ev, err := in.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "readspeed:", err)
			os.Exit(1)
		}
		n++
		bytes += uint64(ev.Bytes)
	}
	secs := time.Since(start).Seconds()
	fmt.Printf("events %d seconds %.3f events_per_s %.0f\n", n, secs, float64(n)/secs)
}
