// Command mkcapture builds large blktrace captures for benchmarks from a
// real one: it repeats every per-CPU file of a capture N times, shifting
// each copy's times past the previous copy's end and renumbering sequence
// numbers, so the result is a valid capture N times as long. With -strip it
// removes the cgroup tags (the 0x100 action flag and the 8-byte cgroup id
// at the start of the payload), producing the classic format that
// Debian's blkparse 1.2.0 reads in full: a fair side-by-side.
//
//	mkcapture -in shared/captures/recorded/g-bfq-large-nomsg/g-bfq-large-nomsg -n 11 -strip -out /tmp/big/big
//
// Input files may be zstd-compressed (NAME.blktrace.N.zst). Only v7
// little- or big-endian files of the relay format are handled.
package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"
)

const hdr = 48

func main() {
	in := flag.String("in", "", "input capture basename (NAME for NAME.blktrace.N[.zst])")
	out := flag.String("out", "", "output basename")
	n := flag.Int("n", 1, "number of copies")
	strip := flag.Bool("strip", false, "strip cgroup tags")
	flag.Parse()
	if *in == "" || *out == "" || *n < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*in, *out, *n, *strip); err != nil {
		fmt.Fprintln(os.Stderr, "mkcapture:", err)
		os.Exit(1)
	}
}

func open(name string) (io.ReadCloser, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(name, ".zst") {
		return f, nil
	}
	d, err := zstd.NewReader(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{d, closers{d.IOReadCloser(), f}}, nil
}

type closers []io.Closer

func (c closers) Close() error {
	for _, x := range c {
		x.Close()
	}
	return nil
}

// files lists the capture's per-CPU files by CPU index.
func files(base string) (map[int]string, error) {
	m, err := filepath.Glob(base + ".blktrace.*")
	if err != nil {
		return nil, err
	}
	out := map[int]string{}
	for _, f := range m {
		rest := strings.TrimPrefix(f, base+".blktrace.")
		rest = strings.TrimSuffix(rest, ".zst")
		var cpu int
		if _, err := fmt.Sscanf(rest, "%d", &cpu); err == nil {
			out[cpu] = f
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no files %s.blktrace.*", base)
	}
	return out, nil
}

// span returns the first and last time over all files.
func span(fs map[int]string) (first, last uint64, err error) {
	first = ^uint64(0)
	for _, name := range fs {
		err = each(name, func(rec []byte, bo binary.ByteOrder) error {
			t := bo.Uint64(rec[8:])
			if rec[30]&0x04 != 0 && bo == binary.LittleEndian || bo == binary.BigEndian && rec[29]&0x04 != 0 {
				return nil // notify: times of notes are not the capture's span
			}
			first = min(first, t)
			last = max(last, t)
			return nil
		})
		if err != nil {
			return
		}
	}
	return
}

// each calls fn for every record of a file.
func each(name string, fn func(rec []byte, bo binary.ByteOrder) error) error {
	rc, err := open(name)
	if err != nil {
		return err
	}
	defer rc.Close()
	r := bufio.NewReaderSize(rc, 1<<20)
	buf := make([]byte, hdr+65536)
	var off int64
	for {
		if _, err := io.ReadFull(r, buf[:hdr]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("%s: offset %d: %w", name, off, err)
		}
		var bo binary.ByteOrder = binary.LittleEndian
		if binary.LittleEndian.Uint32(buf)&0xffffff00 != 0x65617400 {
			bo = binary.BigEndian
			if bo.Uint32(buf)&0xffffff00 != 0x65617400 {
				return fmt.Errorf("%s: offset %d: bad magic", name, off)
			}
		}
		if buf[0] != 7 && buf[3] != 7 {
			return fmt.Errorf("%s: offset %d: only v7 records are handled", name, off)
		}
		pdu := int(bo.Uint16(buf[46:]))
		if _, err := io.ReadFull(r, buf[hdr:hdr+pdu]); err != nil {
			return fmt.Errorf("%s: offset %d: truncated payload: %w", name, off, err)
		}
		if err := fn(buf[:hdr+pdu], bo); err != nil {
			return err
		}
		off += int64(hdr + pdu)
	}
}

func run(in, out string, n int, strip bool) error {
	fs, err := files(in)
	if err != nil {
		return err
	}
	first, last, err := span(fs)
	if err != nil {
		return err
	}
	period := last - first + 1_000_000 // copies 1 ms apart
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	for cpu, name := range fs {
		f, err := os.Create(fmt.Sprintf("%s.blktrace.%d", out, cpu))
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		var seq uint32
		for c := 0; c < n; c++ {
			shift := uint64(c) * period
			err := each(name, func(rec []byte, bo binary.ByteOrder) error {
				action := bo.Uint32(rec[28:])
				notify := action&(0x0400<<16) != 0
				bo.PutUint64(rec[8:], bo.Uint64(rec[8:])+shift)
				if !notify {
					seq++
					bo.PutUint32(rec[4:], seq)
				}
				if c > 0 && notify && action&0xff != 2 {
					return nil // process and timestamp notes once
				}
				if strip && action&0x100 != 0 {
					pdu := int(bo.Uint16(rec[46:]))
					if pdu >= 8 {
						copy(rec[hdr:], rec[hdr+8:])
						rec = rec[:len(rec)-8]
						bo.PutUint16(rec[46:], uint16(pdu-8))
					}
					bo.PutUint32(rec[28:], action&^0x100)
				}
				_, err := w.Write(rec)
				return err
			})
			if err != nil {
				f.Close()
				return err
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}
