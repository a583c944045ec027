package pipeline

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"path/filepath"
	"sync"

	"github.com/tracesched/tracesched/device"
	"github.com/tracesched/tracesched/trace"
)

// Cache keeps fitted device models on disk, keyed by what the fit read: the
// calibration's requests (every field device.Calibrate may read), its
// options, and the program that fitted them (a hash of its executable, so
// that a changed calibration never serves an old fit). An entry that fails
// to load or to validate is ignored (and refitted and replaced).
type Cache struct {
	// Dir holds the entries, one JSON file each.
	Dir string
	// Program identifies the fitting code; DefaultCache sets it to the
	// SHA-256 of the running executable.
	Program string
}

// DefaultCache returns the cache under os.UserCacheDir
// (tracesched/device), or an error when there is no usable cache
// directory or executable to key it by.
func DefaultCache() (*Cache, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return nil, err
	}
	prog, err := executableHash()
	if err != nil {
		return nil, err
	}
	return &Cache{Dir: filepath.Join(dir, "tracesched", "device"), Program: prog}, nil
}

var exeHash struct {
	once sync.Once
	sum  string
	err  error
}

// executableHash returns the SHA-256 of the running executable (computed
// once per process).
func executableHash() (string, error) {
	exeHash.once.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			exeHash.err = err
			return
		}
		f, err := os.Open(exe)
		if err != nil {
			exeHash.err = err
			return
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			exeHash.err = err
			return
		}
		exeHash.sum = hex.EncodeToString(h.Sum(nil))
	})
	return exeHash.sum, exeHash.err
}

// cacheVersion is the layout of a cache entry and of its key (3: the
// number of requests after them, so that the key is one pass; 4: the
// requests' fields coded as varints of their differences).
const cacheVersion = 4

// entry is one cached fit.
type entry struct {
	Version int           `json:"version"`
	Key     string        `json:"key"`
	Fit     *device.Fit   `json:"fit"` // Fit.Model is the model
	Model   *device.Model `json:"-"`
}

// Key returns the cache key of a calibration of reqs with opts (KeySeq).
func (c *Cache) Key(reqs []trace.Request, opts device.CalibrateOptions) string {
	return c.KeySeq(device.Pointers(reqs), opts)
}

// KeySeq returns the cache key of a calibration of reqs with opts: a hex
// SHA-256 of the program, the options and, per request, every field
// device.Calibrate reads (ID, sector, bytes, category, PID, cgroup, the Q,
// I, D and C times, bios, flags), hashed a block of requests at a time as
// they come, then their number. The fields are coded as varints (zigzag
// for differences): the ID, sector, cgroup and Q as their difference from
// the previous request's, I and D from the request's Q, C from its D,
// the others as they are. That is a one-to-one coding of the sequence (each
// value follows from those before it) of about 20 bytes a request instead
// of 82, and hashing was most of a warm replay's lookup.
func (c *Cache) KeySeq(reqs iter.Seq[*trace.Request], opts device.CalibrateOptions) string {
	h := sha256.New()
	fmt.Fprintf(h, "tracesched device cache v%d\nprogram %s\nmodel v%d\n", cacheVersion, c.Program, device.Version)
	fmt.Fprintf(h, "options %d %d %d %d %d %t %t %d %d\n", opts.Kind, opts.Seed, opts.Quantiles, opts.SeqWindow,
		opts.MinRequests, opts.NoBatching, opts.NotRotational, opts.CVSamples, opts.FitSamples)
	const perReq = 12 * binary.MaxVarintLen64
	buf := make([]byte, 0, 1024*perReq)
	var prev trace.Request
	n := 0
	for r := range reqs {
		n++
		buf = binary.AppendUvarint(buf, zigzag(r.ID-prev.ID))
		buf = binary.AppendUvarint(buf, zigzag(r.Sector-prev.Sector))
		buf = binary.AppendUvarint(buf, uint64(r.Bytes))
		buf = binary.AppendUvarint(buf, uint64(r.Cat))
		buf = binary.AppendUvarint(buf, uint64(r.PID))
		buf = binary.AppendUvarint(buf, zigzag(r.Cgroup-prev.Cgroup))
		buf = binary.AppendUvarint(buf, zigzag(uint64(r.Queue-prev.Queue)))
		buf = binary.AppendUvarint(buf, zigzag(uint64(r.Insert-r.Queue)))
		buf = binary.AppendUvarint(buf, zigzag(uint64(r.Issue-r.Queue)))
		buf = binary.AppendUvarint(buf, zigzag(uint64(r.Complete-r.Issue)))
		buf = binary.AppendUvarint(buf, uint64(r.Bios))
		buf = binary.AppendUvarint(buf, uint64(r.Flags))
		prev.ID, prev.Sector, prev.Cgroup, prev.Queue = r.ID, r.Sector, r.Cgroup, r.Queue
		if len(buf)+perReq > cap(buf) {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	fmt.Fprintf(h, "requests %d\n", n)
	return hex.EncodeToString(h.Sum(nil))
}

// zigzag maps a difference (two's complement, wrapped) to a uint64 that is
// small when the difference is near 0 either way, one to one.
func zigzag(d uint64) uint64 { return d<<1 ^ uint64(int64(d)>>63) }

func (c *Cache) path(key string) string { return filepath.Join(c.Dir, key+".json") }

// errMiss is a cache miss: no entry, or one that does not load.
var errMiss = errors.New("not cached")

// Load returns the cached fit of key, its model validated, or an error
// (errMiss wrapped for any entry that is absent, unreadable, of another
// key or version, or whose model fails device.Model.Validate).
func (c *Cache) Load(key string) (*device.Model, *device.Fit, error) {
	b, err := os.ReadFile(c.path(key))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errMiss, err)
	}
	var e entry
	e.Fit = &device.Fit{SeekCorrelation: math.NaN()}
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %v", errMiss, c.path(key), err)
	}
	if e.Version != cacheVersion || e.Key != key || e.Fit == nil || e.Fit.Model == nil {
		return nil, nil, fmt.Errorf("%w: %s: another version or key", errMiss, c.path(key))
	}
	if err := e.Fit.Model.Validate(); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %v", errMiss, c.path(key), err)
	}
	return e.Fit.Model, e.Fit, nil
}

// Store writes the fit of key, atomically (a temporary file renamed into
// place), creating the directory.
func (c *Cache) Store(key string, fit *device.Fit) error {
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(entry{Version: cacheVersion, Key: key, Fit: fit})
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(c.Dir, "."+key+".tmp*")
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), c.path(key)); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
