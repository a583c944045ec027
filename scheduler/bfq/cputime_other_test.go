//go:build !unix

package bfq

// cpuSeconds is not measured here: the req/cpu-s metric is left out.
func cpuSeconds() float64 { return 0 }
