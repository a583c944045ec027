// Command mutate builds the hostile inputs of bench/hostile/run.sh from
// real captures: each subcommand reads one file (zstd-compressed when its
// name ends in .zst) and writes the mutated copy, uncompressed unless the
// output name ends in .zst.
//
//	mutate flipc IN OUT BIT       flip bit BIT of the time of the last C record (v7 little-endian)
//	mutate issueonly N OUT        N D records without any C (v7 little-endian, one CPU)
//	mutate ftracelost IN OUT      an ftrace bin stream with "CPU:0 [LOST 7 EVENTS]" before its 3rd record
//	mutate truncate IN OUT FRAC   the first FRAC (0..1) of IN's bytes, compressed again when OUT ends in .zst
//	mutate longwindow IN OUT      IN compressed by zstd, its frame declaring a 2 GiB window (zstd --long=31)
//	mutate prefix IN OUT HEX      HEX bytes, then IN's bytes (for a BOM, a NUL, an ESC)
//	mutate comm IN OUT            blkparse text IN with the process name fio replaced by one holding terminal escapes
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
)

const hdr = 48 // struct blk_io_trace, version 7

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: mutate flipc|issueonly|ftracelost|truncate|longwindow|prefix|comm ...")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(1)
	}
}

func run(cmd string, a []string) error {
	need := map[string]int{"flipc": 3, "issueonly": 2, "ftracelost": 2, "truncate": 3, "longwindow": 2, "prefix": 3, "comm": 2}
	if n, ok := need[cmd]; !ok || len(a) != n {
		return fmt.Errorf("%s: wrong arguments", cmd)
	}
	switch cmd {
	case "issueonly":
		n, err := strconv.Atoi(a[0])
		if err != nil {
			return err
		}
		return write(a[1], issueOnly(n))
	}
	in, err := read(a[0])
	if err != nil {
		return err
	}
	switch cmd {
	case "flipc":
		bit, err := strconv.Atoi(a[2])
		if err != nil {
			return err
		}
		last := -1
		for off := 0; off+hdr <= len(in); {
			if binary.LittleEndian.Uint32(in[off+28:])&0xff == 8 {
				last = off
			}
			off += hdr + int(binary.LittleEndian.Uint16(in[off+46:]))
		}
		if last < 0 {
			return fmt.Errorf("%s: no C record", a[0])
		}
		t := binary.LittleEndian.Uint64(in[last+8:]) ^ 1<<bit
		binary.LittleEndian.PutUint64(in[last+8:], t)
		return write(a[1], in)
	case "ftracelost":
		// Records are 16-byte ftrace header + 48-byte record + pdu.
		off, n := 0, 0
		for off+16+hdr <= len(in) && n < 2 {
			off += 16 + hdr + int(binary.LittleEndian.Uint16(in[off+16+46:]))
			n++
		}
		out := append(append(append([]byte{}, in[:off]...), "CPU:0 [LOST 7 EVENTS]\n"...), in[off:]...)
		return write(a[1], out)
	case "truncate":
		f, err := strconv.ParseFloat(a[2], 64)
		if err != nil {
			return err
		}
		return write(a[1], in[:int(f*float64(len(in)))])
	case "longwindow":
		var b bytes.Buffer
		w, err := zstd.NewWriter(&b, zstd.WithWindowSize(512<<20), zstd.WithSingleSegment(false), zstd.WithEncoderLevel(zstd.SpeedFastest))
		if err != nil {
			return err
		}
		w.Write(in)
		w.Close()
		// Declare a 2 GiB window (zstd --long=31) in the frame header:
		// Window_Descriptor = exponent 21 (windowLog 31) << 3.
		out := b.Bytes()
		if out[4]&0x20 == 0 { // not Single_Segment: the descriptor follows
			out[5] = 21 << 3
		}
		return os.WriteFile(a[1], out, 0o644)
	case "prefix":
		p, err := hex.DecodeString(a[2])
		if err != nil {
			return err
		}
		return write(a[1], append(p, in...))
	case "comm":
		// blkparse's default format ends each event line with "[comm]"
		// ("[0]" on C lines is the error, not a name): the fixtures' jobs
		// are fio.
		re := regexp.MustCompile(`\[fio\]\n`)
		out := re.ReplaceAll(in, []byte("[evil\x1b[2J\x1b[31m\x07]\n"))
		return write(a[1], out)
	}
	return nil
}

// issueOnly returns n D records (sector i*8, 4096 bytes, pid 100, device
// 8,0, cpu 0), 1 us apart, and no completion.
func issueOnly(n int) []byte {
	out := make([]byte, 0, n*hdr)
	var r [hdr]byte
	for i := 0; i < n; i++ {
		le := binary.LittleEndian
		le.PutUint32(r[0:], 0x65617407)
		le.PutUint32(r[4:], uint32(i+1))
		le.PutUint64(r[8:], uint64(i+1)*1000)
		le.PutUint64(r[16:], uint64(i)*8)
		le.PutUint32(r[24:], 4096)
		le.PutUint32(r[28:], 7|0x0001<<16) // ISSUE, category READ
		le.PutUint32(r[32:], 100)
		le.PutUint32(r[36:], 8<<20)
		le.PutUint32(r[40:], 0)
		out = append(out, r[:]...)
	}
	return out
}

func read(name string) ([]byte, error) {
	b, err := os.ReadFile(name)
	if err != nil || !strings.HasSuffix(name, ".zst") {
		return b, err
	}
	d, err := zstd.NewReader(bytes.NewReader(b), zstd.WithDecoderMaxWindow(1<<30))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return io.ReadAll(d)
}

func write(name string, b []byte) error {
	if !strings.HasSuffix(name, ".zst") {
		return os.WriteFile(name, b, 0o644)
	}
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf)
	if err != nil {
		return err
	}
	w.Write(b)
	w.Close()
	return os.WriteFile(name, buf.Bytes(), 0o644)
}
