// Package manifest describes the context a block-layer capture was taken in
// (manifest.json beside the capture): the kernel, the traced device and its
// queue settings, the scheduler and its tunables, the cgroups the trace
// touched with their weights and limits, the processes seen with their I/O
// priority, the kernel's own counters before and after, and a completeness
// check of the trace against those counters.
//
// The format is the capture rig's (../shared/rig/blkrig.py manifest): every
// key that rig writes and a reader here uses keeps its name and meaning, so
// the manifests of ../shared/captures and fixtures/ load unchanged. Keys this
// package adds (complete, incomplete_reasons, devices, processes,
// recording, the kernel_counters_* maps) are optional on reading.
//
// Units: sizes in bytes unless the key says otherwise (max_sectors_kb in
// KiB, device_sectors and lba values in 512-byte sectors), times in seconds
// (wall_s, duration) or ns (first_time_ns); weights as the kernel's files show
// them (1..1000 for BFQ, 1..10000 for io.weight).
package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// FileName is the manifest's name inside a capture directory.
const FileName = "manifest.json"

// Manifest is manifest.json. Pointer fields are absent (null) when unknown.
type Manifest struct {
	Name       string `json:"name"`
	CreatedUTC string `json:"created_utc,omitempty"`
	// Tool is what wrote the manifest: "tracesched record", "tracesched
	// manifest"; empty for the rig's.
	Tool    string `json:"tool,omitempty"`
	Command string `json:"command,omitempty"`
	Host    Host   `json:"host"`

	// Scheduler is the active scheduler of Device ("bfq", "mq-deadline", ...).
	Scheduler string `json:"scheduler"`
	// TunablesRequested are the NAME=VALUE settings the recording tool
	// changed from the kernel's defaults before tracing (the rig's -t); a
	// recorder that changes nothing leaves it empty.
	TunablesRequested []string `json:"tunables_requested"`
	// IoschedTunables holds every file under queue/iosched/ of Device, as
	// read (numbers as numbers).
	IoschedTunables map[string]any `json:"iosched_tunables"`
	// Device is the traced device (the first one when several were traced).
	Device Device `json:"device"`
	// Devices lists every traced device, Device first; absent in the rig's
	// single-device manifests.
	Devices []Device `json:"devices,omitempty"`

	Cgroups      []Cgroup  `json:"cgroups"`
	CgroupIDNote string    `json:"cgroup_id_note,omitempty"`
	Processes    []Process `json:"processes,omitempty"`

	// TraceComplete is the completeness check's verdict: true when every
	// count matched the kernel's (Completeness), false when one did not
	// or events were lost, null when nothing could be compared.
	TraceComplete *bool         `json:"trace_complete"`
	Completeness  *Completeness `json:"completeness,omitempty"`
	// Complete is false when the capture is partial: interrupted, cut by a
	// size limit or a write error, or incomplete by the check. Absent in
	// the rig's manifests (TraceComplete says it there).
	Complete          *bool    `json:"complete,omitempty"`
	IncompleteReasons []string `json:"incomplete_reasons,omitempty"`

	DeviceStatDelta map[string]int64 `json:"device_stat_delta,omitempty"`
	WallS           *float64         `json:"wall_s,omitempty"`
	Recording       *Recording       `json:"recording,omitempty"`
}

// Host is the recording machine.
type Host struct {
	KernelRelease string `json:"kernel_release"`
	KernelVersion string `json:"kernel_version,omitempty"`
	Machine       string `json:"machine,omitempty"`
	NCPUs         int    `json:"ncpus,omitempty"`
	MemTotalKiB   int64  `json:"mem_total_kib,omitempty"`
}

// Device is a block device and its queue settings. The rig writes the
// queue/ attributes flat into this object; the typed fields are the ones
// readers use, Queue keeps every queue/ attribute read.
type Device struct {
	Name       string `json:"name,omitempty"`        // kernel name: loop0, sda, nvme0n1
	Path       string `json:"loop_device,omitempty"` // the rig's key: the /dev path
	MajorMinor string `json:"major_minor"`           // "7:0"
	KernelDevT uint32 `json:"kernel_dev_t"`          // major<<20 | minor, as trace records carry it
	Model      string `json:"model,omitempty"`
	Vendor     string `json:"vendor,omitempty"`
	Driver     string `json:"driver,omitempty"`
	// SchedulerLine is queue/scheduler as read: "none mq-deadline kyber [bfq]".
	SchedulerLine    string `json:"scheduler,omitempty"`
	Rotational       *int   `json:"rotational,omitempty"`
	NrRequests       *int   `json:"nr_requests,omitempty"`
	LogicalBlockSize *int   `json:"logical_block_size,omitempty"`
	MaxSectorsKB     *int   `json:"max_sectors_kb,omitempty"`
	WriteCache       string `json:"write_cache,omitempty"`
	SizeBytes        int64  `json:"size_bytes,omitempty"`
	NrHWQueues       *int   `json:"nr_hw_queues,omitempty"`
	// HWQueueDepth is the hardware queue's tag depth (mq/0/nr_tags, or the
	// loop module's hw_queue_depth in the rig's manifests).
	HWQueueDepth *int `json:"hw_queue_depth,omitempty"`
	// Queue holds every readable queue/ attribute (not iosched/) as text.
	Queue map[string]string `json:"queue,omitempty"`
	// Iosched holds queue/iosched/ of this device (Manifest.IoschedTunables
	// repeats it for Device).
	Iosched map[string]any `json:"iosched_tunables,omitempty"`
	// Files are this device's per-CPU trace files, relative to the manifest.
	Files []string `json:"trace_files,omitempty"`
}

// Cgroup is one cgroup the trace touched (or the recorder knew of).
type Cgroup struct {
	Name      string `json:"name,omitempty"`
	Path      string `json:"path"`      // inside its hierarchy, "/" for the root
	Hierarchy string `json:"hierarchy"` // "cgroup v1 blkio" or "cgroup v2"
	// ID is the id the trace records: the kernfs id (inode number) of the
	// cgroup's directory in the hierarchy that holds the io controller.
	ID        uint64 `json:"cgroup_id"`
	IDPrinted string `json:"id_as_printed_by_blkparse,omitempty"`
	// BFQWeight is the weight BFQ gives the group on the traced device: the
	// device's line of blkio.bfq.weight_device / io.bfq.weight if any, else
	// the default weight. Null for the root group (it competes with nobody).
	BFQWeight *int `json:"bfq_weight"`
	// IOWeight is cgroup v2's io.weight as read ("default 100"), IOMax its
	// io.max lines; v1 has neither.
	IOWeight string   `json:"io_weight,omitempty"`
	IOMax    []string `json:"io_max,omitempty"`

	// The rig's kernel deltas (blkio.bfq.io_serviced / io_service_bytes).
	KernelServicedReadDelta  *int64 `json:"kernel_bfq_io_serviced_read_delta,omitempty"`
	KernelServicedWriteDelta *int64 `json:"kernel_bfq_io_serviced_write_delta,omitempty"`
	KernelBytesReadDelta     *int64 `json:"kernel_bfq_io_service_bytes_read_delta,omitempty"`
	KernelBytesWriteDelta    *int64 `json:"kernel_bfq_io_service_bytes_write_delta,omitempty"`
	// CountersBefore/After are this cgroup's kernel counters for the traced
	// device: "bfq.io_serviced.Read", "io.stat.rios", ...
	CountersBefore map[string]int64 `json:"kernel_counters_before,omitempty"`
	CountersAfter  map[string]int64 `json:"kernel_counters_after,omitempty"`

	TraceIOEvents int            `json:"trace_io_events,omitempty"`
	TraceActions  map[string]int `json:"trace_actions,omitempty"`
	TraceComplete *bool          `json:"trace_complete,omitempty"`
}

// Process is a process the trace shows issuing I/O.
type Process struct {
	PID    int    `json:"pid"`
	Comm   string `json:"comm"`
	Cgroup string `json:"cgroup,omitempty"` // its io cgroup path when first seen
	// IOPrio is ioprio_get(IOPRIO_WHO_PROCESS) when first seen: class<<13 |
	// level; IOPrioText as ionice prints it ("best-effort/4", "none/0").
	// Null when the process was gone before it could be read.
	IOPrio     *int   `json:"ioprio,omitempty"`
	IOPrioText string `json:"ioprio_text,omitempty"`
	Nice       *int   `json:"nice,omitempty"`
	// Queued counts the Q events the trace attributes to the pid.
	Queued int `json:"trace_queued,omitempty"`
}

// Recording describes how a `tracesched record` capture was taken.
type Recording struct {
	Mechanism string `json:"mechanism"`
	// Settings are the tracefs and per-device settings in force, read back.
	Settings map[string]string `json:"settings,omitempty"`
	// TracefsBefore are the tracefs settings as found (and restored).
	TracefsBefore map[string]string `json:"tracefs_before,omitempty"`
	// DeviceFilters are /sys/block/DEV/trace/* per device, read back after
	// being set, and as found before.
	DeviceFilters map[string]map[string]string `json:"device_filters,omitempty"`
	DurationS     float64                      `json:"duration_s"`
	Stop          string                       `json:"stop"` // why recording ended: "command exited", "duration", "SIGINT", ...
	CommandRC     *int                         `json:"command_rc,omitempty"`
	Records       uint64                       `json:"records"`
	Bytes         int64                        `json:"bytes"`
	Lost          Lost                         `json:"lost"`
	NoCgroup      bool                         `json:"no_cgroup,omitempty"`
	Restored      bool                         `json:"tracefs_restored"`
	RestoreErrors []string                     `json:"restore_errors,omitempty"`
	Notes         []string                     `json:"notes,omitempty"`
	FirstTimeNs   int64                        `json:"first_time_ns,omitempty"`
	LastTimeNs    int64                        `json:"last_time_ns,omitempty"`
	// OtherDevices counts records of untraced devices (dropped).
	OtherDevices map[string]uint64 `json:"other_devices_dropped,omitempty"`
}

// Lost counts events the ring buffer lost: per-CPU stats and in-band
// "CPU:n [LOST m EVENTS]" markers of the stream.
type Lost struct {
	Overrun        int64 `json:"overrun"`
	CommitOverrun  int64 `json:"commit_overrun"`
	Dropped        int64 `json:"dropped_events"`
	InBandMarkers  int64 `json:"lost_markers_in_stream"`
	InBandEvents   int64 `json:"lost_events_reported_in_stream"`
	JunkBytes      int64 `json:"junk_bytes_in_stream"`
	TotalLostKnown int64 `json:"total_lost_known"`
}

// Load reads a manifest file.
func Load(path string) (*Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%s: byte %d: %w", path, se.Offset, err)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("%s: byte %d: field %s: %w", path, te.Offset, te.Field, err)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, d := range append([]*Device{&m.Device}, ptrs(m.Devices)...) {
		if d.Name == "" && d.Path != "" {
			d.Name = filepath.Base(d.Path) // the rig names the device by its /dev path only
		}
	}
	return &m, nil
}

// Beside returns the path of the manifest that belongs to a capture INPUT
// (a directory, a per-CPU set's basename, one of its files, or a single
// trace file): manifest.json in the same directory. It returns "" when
// there is none, or when its name says it belongs to another capture of
// that directory.
func Beside(input string) string {
	if input == "" || input == "-" {
		return ""
	}
	dir, base := input, ""
	if fi, err := os.Stat(input); err != nil || !fi.IsDir() {
		dir, base = filepath.Dir(input), filepath.Base(input)
	}
	p := filepath.Join(dir, FileName)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	if base != "" {
		if m, err := Load(p); err == nil && m.Name != "" && !belongs(base, m) {
			return ""
		}
	}
	return p
}

// belongs reports whether a file or set basename is the manifest's capture.
func belongs(base string, m *Manifest) bool {
	names := []string{m.Name}
	for _, d := range m.Devices {
		names = append(names, d.Name)
		for _, f := range d.Files {
			names = append(names, filepath.Base(f))
		}
	}
	for _, n := range names {
		if n != "" && (base == n || strings.HasPrefix(base, n+".")) {
			return true
		}
	}
	return false
}

// Write stores m at path through a temporary file and a rename, so a
// reader never sees half a manifest.
func Write(path string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	tmp, err := os.CreateTemp(filepath.Dir(path), ".manifest-*.json")
	if err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// DeviceFor returns the manifest's entry for the device called name (a
// kernel name, or a trace set's basename) or with dev_t devt, else Device.
func (m *Manifest) DeviceFor(name string, devt uint32) *Device {
	for i := range m.Devices {
		d := &m.Devices[i]
		if (name != "" && d.Name == name) || (devt != 0 && d.KernelDevT == devt) {
			return d
		}
	}
	return &m.Device
}

// Weights returns the cgroups' BFQ weights by trace id (cgroups without a
// recorded weight are left out).
func (m *Manifest) Weights() map[uint64]int {
	w := map[uint64]int{}
	for _, c := range m.Cgroups {
		if c.BFQWeight != nil {
			w[c.ID] = *c.BFQWeight
		}
	}
	return w
}

// Paths returns the cgroups' paths by trace id.
func (m *Manifest) Paths() map[uint64]string {
	p := map[uint64]string{}
	for _, c := range m.Cgroups {
		if c.Path != "" {
			p[c.ID] = c.Path
		}
	}
	return p
}

// IOPrios returns the recorded ioprio (class<<13 | level) by pid.
func (m *Manifest) IOPrios() map[int]int {
	out := map[int]int{}
	for _, p := range m.Processes {
		if p.IOPrio != nil {
			out[p.PID] = *p.IOPrio
		}
	}
	return out
}

// Tunables returns the device's iosched tunables as NAME -> text, sorted
// keys available through SortedKeys.
func (d *Device) Tunables(m *Manifest) map[string]string {
	src := d.Iosched
	if src == nil && d == &m.Device {
		src = m.IoschedTunables
	}
	out := make(map[string]string, len(src))
	for k, v := range src {
		out[k] = valueText(v)
	}
	return out
}

// valueText renders a JSON value read into any as the sysfs text it came from.
func valueText(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		return x
	case json.Number:
		return x.String()
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// SortedKeys returns m's keys in order.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Incomplete reports whether the manifest marks the capture partial or
// incomplete, with the reasons it gives.
func (m *Manifest) Incomplete() (bool, []string) {
	var reasons []string
	reasons = append(reasons, m.IncompleteReasons...)
	bad := m.Complete != nil && !*m.Complete
	if m.TraceComplete != nil && !*m.TraceComplete {
		bad = true
		if m.Completeness != nil {
			for _, p := range m.Completeness.Problems {
				if !contains(reasons, p) {
					reasons = append(reasons, p)
				}
			}
		}
	}
	if bad && len(reasons) == 0 {
		reasons = append(reasons, "the manifest marks the trace incomplete")
	}
	return bad, reasons
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Encode writes m as indented JSON.
func Encode(w io.Writer, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func ptrs(ds []Device) []*Device {
	out := make([]*Device, len(ds))
	for i := range ds {
		out[i] = &ds[i]
	}
	return out
}

// Reserve pads the manifest at path with spaces to n bytes, so that a later
// WriteInPlace finds room on a disk that has filled up meanwhile.
func Reserve(path string, n int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() < n {
		_, err = f.Write([]byte(strings.Repeat(" ", int(n-fi.Size()))))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteInPlace overwrites the manifest at path within its present size
// (padding with spaces, which JSON readers skip): the way to store it when
// the disk is full. It fails when m does not fit.
func WriteInPlace(path string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if int64(len(b)) > fi.Size() {
		return fmt.Errorf("%s: %d bytes of manifest do not fit the %d reserved", path, len(b), fi.Size())
	}
	b = append(b, []byte(strings.Repeat(" ", int(fi.Size())-len(b)))...)
	if _, err := f.WriteAt(b, 0); err != nil {
		return err
	}
	return f.Close()
}
