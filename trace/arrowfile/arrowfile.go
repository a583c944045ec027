package arrowfile

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/tracesched/tracesched/trace"
)

// SchemaVersion is the version of the events and requests schemas
// written by this package, recorded as "tracesched.schema_version". Readers
// reject other versions.
const SchemaVersion = "1"

// Values of the "tracesched.stream" schema metadata key, which tell an
// events file from a requests file.
const (
	StreamEvents   = "events"
	StreamRequests = "requests"
)

// DefaultBatchRows is the number of rows per Arrow record batch when
// WithBatchRows is not given. A batch of events takes about 110 bytes per row
// in memory while it is built (about 7 MiB at the default; as much again
// for its compressed form, less the compression), independent of the
// capture's length.
const DefaultBatchRows = 64 << 10

// maxArrowBatchRows bounds WithBatchRows so one batch stays well under the
// 2 GiB limits of 32-bit Arrow offsets.
const maxArrowBatchRows = 1 << 22

// ReadAtSeeker is what the Arrow readers need of a file: random access for
// the record batches, seeking to find the footer at the end, and Read for
// arrow-go's ipc.ReadAtSeeker (*os.File and *bytes.Reader qualify).
type ReadAtSeeker interface {
	io.Reader
	io.ReaderAt
	io.Seeker
}

// Option configures an Arrow writer or reader.
type Option func(*arrowConfig)

type arrowConfig struct {
	mem         memory.Allocator
	batchRows   int
	concurrency int
	name        string
	records     RecordFunc // record mode (records.go): batches go here, not to a file
	maxRows     int64      // readers: rows a batch may declare (maxArrowBatchRows)
	textSlack   int64      // readers: decompressed bytes a batch may hold beyond 256 per row
}

func newArrowConfig(opts []Option) arrowConfig {
	c := arrowConfig{batchRows: DefaultBatchRows, concurrency: 1, maxRows: maxArrowBatchRows, textSlack: 16 << 20}
	for _, o := range opts {
		o(&c)
	}
	if c.mem == nil {
		c.mem = memory.NewGoAllocator()
	}
	return c
}

// WithAllocator sets the allocator for a writer's column buffers and a
// reader's decoding. (A writer's compressed output is ordinary Go memory,
// reused from batch to batch.) The default is a new memory.NewGoAllocator()
// per writer or reader.
func WithAllocator(mem memory.Allocator) Option {
	return func(c *arrowConfig) { c.mem = mem }
}

// WithBatchRows sets the number of rows per record batch (default
// DefaultBatchRows; values below 1 select the default, values above 4 Mi
// are capped). A writer holds one batch in memory; a reader decodes one
// batch at a time.
func WithBatchRows(n int) Option {
	return func(c *arrowConfig) {
		switch {
		case n < 1:
			c.batchRows = DefaultBatchRows
		case n > maxArrowBatchRows:
			c.batchRows = maxArrowBatchRows
		default:
			c.batchRows = n
		}
	}
}

// WithCompressConcurrency sets how many goroutines compress the column
// buffers of each batch. With the default, 1, a full batch is compressed
// and written by the Write call that fills it. With n > 1 it is compressed
// in the background by n goroutines, each column buffer by one of them,
// and written while the writer's caller fills the next batch: the writer
// then holds two batches in memory, and an error writing a batch is
// returned by a later Write or by Close. That costs more CPU in all (a
// second set of buffers and encoders, hand-offs between goroutines) and
// pays only when a core would otherwise be idle. Writers only.
func WithCompressConcurrency(n int) Option {
	return func(c *arrowConfig) { c.concurrency = max(n, 1) }
}

// WithName names the file a reader reads, for its errors: each error it
// returns (other than io.EOF) starts with name and a colon, as in
// "sda.ev.arrow: reading events batch 3 at byte 1048576 row 12: ...".
// Readers only.
func WithName(name string) Option {
	return func(c *arrowConfig) { c.name = name }
}

// Schema metadata keys. See the package documentation.
const (
	arrowKeyVersion  = "tracesched.schema_version"
	arrowKeyStream   = "tracesched.stream"
	arrowKeySource   = "tracesched.source"
	arrowKeyKernel   = "tracesched.kernel"
	arrowKeyDevices  = "tracesched.devices"
	arrowKeyOrigin   = "tracesched.origin_ns"
	arrowKeyWallSec  = "tracesched.wall_sec"
	arrowKeyWallNsec = "tracesched.wall_nsec"
	arrowKeyCgroups  = "tracesched.cgroups"
	arrowKeyExtra    = "tracesched.extra."
)

// arrowMetadata renders meta as schema metadata of the given stream.
func arrowMetadata(meta trace.Meta, stream string) arrow.Metadata {
	keys := []string{arrowKeyVersion, arrowKeyStream, arrowKeySource, arrowKeyKernel, arrowKeyDevices, arrowKeyOrigin, arrowKeyWallSec, arrowKeyWallNsec}
	devs := make([]string, len(meta.Devices))
	for i, d := range meta.Devices {
		devs[i] = d.String()
	}
	vals := []string{SchemaVersion, stream, meta.Source, meta.Kernel, strings.Join(devs, ";"),
		strconv.FormatInt(meta.Origin, 10), strconv.FormatUint(uint64(meta.WallSec), 10), strconv.FormatUint(uint64(meta.WallNsec), 10)}
	if len(meta.Cgroups) > 0 {
		m := make(map[string]string, len(meta.Cgroups))
		for id, p := range meta.Cgroups {
			m[strconv.FormatUint(id, 10)] = p
		}
		js, _ := json.Marshal(m) // a map[string]string always marshals; keys come out sorted
		keys, vals = append(keys, arrowKeyCgroups), append(vals, string(js))
	}
	extra := make([]string, 0, len(meta.Extra))
	for k := range meta.Extra {
		extra = append(extra, k)
	}
	sort.Strings(extra)
	for _, k := range extra {
		keys, vals = append(keys, arrowKeyExtra+k), append(vals, meta.Extra[k])
	}
	return arrow.NewMetadata(keys, vals)
}

// arrowParseMeta reads Meta back from schema metadata and checks that it
// describes a stream of the wanted kind in a supported schema version.
func arrowParseMeta(md arrow.Metadata, stream string) (trace.Meta, error) {
	var m trace.Meta
	get := func(k string) string { v, _ := md.GetValue(k); return v }
	if v, ok := md.GetValue(arrowKeyVersion); !ok {
		return m, fmt.Errorf("not a tracesched file: no %s in schema metadata", arrowKeyVersion)
	} else if v != SchemaVersion {
		return m, fmt.Errorf("unsupported %s %q (want %q)", arrowKeyVersion, v, SchemaVersion)
	}
	if s := get(arrowKeyStream); s != stream {
		return m, fmt.Errorf("%s is %q, want %q", arrowKeyStream, s, stream)
	}
	m.Source = get(arrowKeySource)
	m.Kernel = get(arrowKeyKernel)
	if s := get(arrowKeyDevices); s != "" {
		for _, f := range strings.Split(s, ";") {
			maj, mnr, ok := strings.Cut(f, ",")
			a, err1 := strconv.ParseUint(maj, 10, 12)
			b, err2 := strconv.ParseUint(mnr, 10, 20)
			if !ok || err1 != nil || err2 != nil {
				return m, fmt.Errorf("%s: bad device %q", arrowKeyDevices, f)
			}
			m.Devices = append(m.Devices, trace.MkDev(uint32(a), uint32(b)))
		}
	}
	var err error
	if s := get(arrowKeyOrigin); s != "" {
		if m.Origin, err = strconv.ParseInt(s, 10, 64); err != nil {
			return m, fmt.Errorf("%s: %w", arrowKeyOrigin, err)
		}
	}
	for _, kv := range []struct {
		key string
		dst *uint32
	}{{arrowKeyWallSec, &m.WallSec}, {arrowKeyWallNsec, &m.WallNsec}} {
		if s := get(kv.key); s != "" {
			v, err := strconv.ParseUint(s, 10, 32)
			if err != nil {
				return m, fmt.Errorf("%s: %w", kv.key, err)
			}
			*kv.dst = uint32(v)
		}
	}
	if s := get(arrowKeyCgroups); s != "" {
		var cg map[string]string
		if err := json.Unmarshal([]byte(s), &cg); err != nil {
			return m, fmt.Errorf("%s: %w", arrowKeyCgroups, err)
		}
		m.Cgroups = make(map[uint64]string, len(cg))
		for k, p := range cg {
			id, err := strconv.ParseUint(k, 10, 64)
			if err != nil {
				return m, fmt.Errorf("%s: bad cgroup id %q", arrowKeyCgroups, k)
			}
			m.Cgroups[id] = p
		}
	}
	for i, k := range md.Keys() {
		if name, ok := strings.CutPrefix(k, arrowKeyExtra); ok {
			if m.Extra == nil {
				m.Extra = make(map[string]string)
			}
			m.Extra[name] = md.Values()[i]
		}
	}
	return m, nil
}

// Field metadata giving a column's unit.
func arrowUnit(u string) arrow.Metadata { return arrow.NewMetadata([]string{"unit"}, []string{u}) }

var (
	// arrowStringDict is the type comm and cgroup_path had in files written
	// before they became plain utf8 (see arrowStringCol); readers accept
	// both.
	arrowStringDict = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	// arrowSmallDict is the type of the action and msg_sched columns.
	arrowSmallDict = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
)

// Column positions in the events schema.
const (
	evTime = iota
	evSeq
	evCPU
	evDev
	evAction
	evCat
	evSector
	evBytes
	evPID
	evError
	evCgroup
	evCgroupPath
	evComm
	evText
	evFromDev
	evFromSector
	evDepth
	evSplitSector
	evWallSec
	evWallNsec
	evMsgSched
	evMsgPID
	evMsgSync
	evMsgShared
	evMsgNoIdle
	evColumns
)

// arrowEventFields returns the fields of the events schema, in column order.
func arrowEventFields() []arrow.Field {
	ns, sec, by := arrowUnit("ns"), arrowUnit("512-byte sectors"), arrowUnit("bytes")
	p := arrow.PrimitiveTypes
	return []arrow.Field{
		evTime:        {Name: "time_ns", Type: p.Int64, Metadata: ns},
		evSeq:         {Name: "seq", Type: p.Uint32},
		evCPU:         {Name: "cpu", Type: p.Uint32},
		evDev:         {Name: "dev", Type: p.Uint32},
		evAction:      {Name: "action", Type: arrowSmallDict},
		evCat:         {Name: "cat", Type: p.Uint32},
		evSector:      {Name: "sector", Type: p.Uint64, Metadata: sec},
		evBytes:       {Name: "bytes", Type: p.Uint32, Metadata: by},
		evPID:         {Name: "pid", Type: p.Uint32},
		evError:       {Name: "error", Type: p.Int16},
		evCgroup:      {Name: "cgroup", Type: p.Uint64},
		evCgroupPath:  {Name: "cgroup_path", Type: arrow.BinaryTypes.String, Nullable: true},
		evComm:        {Name: "comm", Type: arrow.BinaryTypes.String, Nullable: true},
		evText:        {Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
		evFromDev:     {Name: "from_dev", Type: p.Uint32, Nullable: true},
		evFromSector:  {Name: "from_sector", Type: p.Uint64, Nullable: true, Metadata: sec},
		evDepth:       {Name: "depth", Type: p.Uint64, Nullable: true},
		evSplitSector: {Name: "split_sector", Type: p.Uint64, Nullable: true, Metadata: sec},
		evWallSec:     {Name: "wall_sec", Type: p.Uint32, Nullable: true, Metadata: arrowUnit("s")},
		evWallNsec:    {Name: "wall_nsec", Type: p.Uint32, Nullable: true, Metadata: ns},
		evMsgSched:    {Name: "msg_sched", Type: arrowSmallDict, Nullable: true},
		evMsgPID:      {Name: "msg_pid", Type: p.Int32, Nullable: true},
		evMsgSync:     {Name: "msg_sync", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		evMsgShared:   {Name: "msg_shared", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		evMsgNoIdle:   {Name: "msg_noidle", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	}
}

// Column positions in the requests schema.
const (
	rqID = iota
	rqDev
	rqSector
	rqBytes
	rqCat
	rqPID
	rqComm
	rqCgroup
	rqQueue
	rqGet
	rqInsert
	rqIssue
	rqComplete
	rqBios
	rqBackMerges
	rqFrontMerges
	rqRequeues
	rqFirstBio
	rqFromDev
	rqFromSector
	rqError
	rqFlags
	rqColumns
)

// arrowRequestFields returns the fields of the requests schema, in column order.
func arrowRequestFields() []arrow.Field {
	ns, sec, by := arrowUnit("ns"), arrowUnit("512-byte sectors"), arrowUnit("bytes")
	p := arrow.PrimitiveTypes
	return []arrow.Field{
		rqID:          {Name: "id", Type: p.Uint64},
		rqDev:         {Name: "dev", Type: p.Uint32},
		rqSector:      {Name: "sector", Type: p.Uint64, Metadata: sec},
		rqBytes:       {Name: "bytes", Type: p.Uint32, Metadata: by},
		rqCat:         {Name: "cat", Type: p.Uint32},
		rqPID:         {Name: "pid", Type: p.Uint32},
		rqComm:        {Name: "comm", Type: arrow.BinaryTypes.String, Nullable: true},
		rqCgroup:      {Name: "cgroup", Type: p.Uint64},
		rqQueue:       {Name: "queue_ns", Type: p.Int64, Nullable: true, Metadata: ns},
		rqGet:         {Name: "get_ns", Type: p.Int64, Nullable: true, Metadata: ns},
		rqInsert:      {Name: "insert_ns", Type: p.Int64, Nullable: true, Metadata: ns},
		rqIssue:       {Name: "issue_ns", Type: p.Int64, Nullable: true, Metadata: ns},
		rqComplete:    {Name: "complete_ns", Type: p.Int64, Nullable: true, Metadata: ns},
		rqBios:        {Name: "bios", Type: p.Uint32},
		rqBackMerges:  {Name: "back_merges", Type: p.Uint32},
		rqFrontMerges: {Name: "front_merges", Type: p.Uint32},
		rqRequeues:    {Name: "requeues", Type: p.Uint32},
		rqFirstBio:    {Name: "first_bio", Type: p.Uint32},
		rqFromDev:     {Name: "from_dev", Type: p.Uint32},
		rqFromSector:  {Name: "from_sector", Type: p.Uint64, Metadata: sec},
		rqError:       {Name: "error", Type: p.Int16},
		rqFlags:       {Name: "flags", Type: p.Uint16},
	}
}

// EventSchema returns the Arrow schema of an events file with meta in its
// metadata. Each call returns a new schema.
func EventSchema(meta trace.Meta) *arrow.Schema {
	md := arrowMetadata(meta, StreamEvents)
	return arrow.NewSchema(arrowEventFields(), &md)
}

// RequestSchema returns the Arrow schema of a requests file with meta in
// its metadata. Each call returns a new schema.
func RequestSchema(meta trace.Meta) *arrow.Schema {
	md := arrowMetadata(meta, StreamRequests)
	return arrow.NewSchema(arrowRequestFields(), &md)
}

// arrowActionDict is the action column's dictionary: entry i is the letter
// of Action(i), so an index is the kernel's action code.
func arrowActionDict() []string {
	d := make([]string, trace.ActionMessage+1)
	for i := range d {
		d[i] = trace.Action(i).Letter()
	}
	return d
}

// arrowParseActionLetter inverts arrowActionDict's entries (Letter).
func arrowParseActionLetter(s string) (trace.Action, bool) {
	if s == "?" {
		return trace.ActionNone, true
	}
	if n, ok := strings.CutPrefix(s, "Action("); ok {
		v, err := strconv.ParseUint(strings.TrimSuffix(n, ")"), 10, 8)
		return trace.Action(v), err == nil && strings.HasSuffix(n, ")")
	}
	if s == "UT" { // not a Letter, but what a foreign writer may use
		return trace.ActionUnplugTimer, true
	}
	return trace.ParseAction(s)
}
