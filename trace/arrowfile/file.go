package arrowfile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// This file writes the Arrow IPC *file* container itself, rather than with
// arrow-go v15's ipc.FileWriter, which cannot do two things a streaming
// capture needs (ipc/file_writer.go and ipc/writer.go at v15.0.2):
//
//  1. Growing dictionaries. FileWriter.Write refuses any dictionary that
//     differs from the first one written ("Arrow IPC File only supports
//     single dictionary per field"), so comm and cgroup path, whose values
//     appear as the capture is read, could not be dictionary-encoded without
//     buffering the whole capture. The Arrow format itself allows delta
//     dictionary batches in files (only replacement is invalid), and
//     Arrow's own file readers (Go, C++, JS) accept them.
//  2. Metadata known only at the end. FileWriter serialises the schema,
//     metadata included, at the first record batch and again in the footer,
//     both from the one immutable *arrow.Schema given at creation. Devices
//     and cgroups are known only once the input has been read.
//
// Nor does it use arrow-go's stream encoder (ipc.Writer) for the batches:
// that creates a zstd streaming encoder per batch, which cost more than all
// the rest of writing. arrow-go serialises only the schema messages
// (arrowSchemaMessage); dictionary and record batches are encoded by
// arrowEnc (enc.go). arrowFile frames each message as arrow-go does
// (continuation marker, padded flatbuffer length, flatbuffer, 8-byte
// aligned body), remembers the position of every dictionary and record
// batch, and on finish writes the end-of-stream marker and a footer whose
// schema carries the final Meta. File readers (ipc.NewFileReader,
// pyarrow.ipc.open_file, apache-arrow's RecordBatchFileReader) take the
// schema from the footer; a stream reader started after the 8-byte magic
// sees the schema written at the start, with the Meta given when the writer
// was created.
//
// The footer is a flatbuffer (format/File.fbs):
//
//	table Footer { version: MetadataVersion (short); schema: Schema;
//	               dictionaries: [Block]; recordBatches: [Block]; }
//	struct Block { offset: long; metaDataLength: int; bodyLength: long; } // 24 bytes
//
// arrowFooter lays it out by hand. The Schema table is not rebuilt: arrow-go
// serialises the final schema as a schema message and the Schema subtree is
// copied from it byte for byte. Flatbuffer references are relative, and a
// builder writes children before parents (at higher addresses), so the
// subtree is the message's tail from the Schema table (or its vtable, if
// lower) to the end; keeping its distance to the end of the buffer keeps its
// alignment.

var (
	arrowMagic = []byte("ARROW1")
	// arrowEOS is the stream's end marker: continuation token, length 0.
	arrowEOS = []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}
)

const arrowMetadataV5 = 4 // flatbuf.MetadataVersionV5

// arrowBlock locates one message in the file, as the footer records it.
type arrowBlock struct {
	offset int64 // of the continuation marker
	meta   int32 // marker, length prefix, flatbuffer and padding: a multiple of 8
	body   int64 // body bytes, a multiple of 8
	// schema, for the reader's first block only: the flatbuffer of a Schema
	// message built from the footer's schema (arrowFooterSchemaMessage),
	// read instead of the file's bytes.
	schema []byte
}

// arrowFile lays messages out as an Arrow IPC file on a plain io.Writer (no
// seeking: positions are counted).
type arrowFile struct {
	w     *bufio.Writer
	pos   int64
	dicts []arrowBlock
	recs  []arrowBlock
	err   error // first write error; later writes are refused
}

func newArrowFile(w io.Writer) *arrowFile {
	return &arrowFile{w: bufio.NewWriterSize(w, 256<<10)}
}

func (f *arrowFile) Write(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.w.Write(p)
	f.pos += int64(n)
	if err != nil {
		f.err = err
	}
	return n, err
}

func (f *arrowFile) pad(to int64) error {
	var zero [8]byte
	if r := f.pos % to; r != 0 {
		_, err := f.Write(zero[:to-r])
		return err
	}
	return nil
}

// message frames one IPC message (metadata meta, a multiple of 8 bytes
// long; body written by body, which returns its length) and records where it
// went when it is a dictionary or record batch.
func (f *arrowFile) message(meta []byte, typ byte, body func() (int64, error)) error {
	if f.pos == 0 {
		if _, err := f.Write(arrowMagic); err != nil {
			return err
		}
		if err := f.pad(8); err != nil {
			return err
		}
	}
	blk := arrowBlock{offset: f.pos}
	padded := (int64(len(meta)) + 8 + 7) &^ 7
	var hdr [8]byte
	binary.LittleEndian.PutUint32(hdr[:4], 0xffffffff)
	binary.LittleEndian.PutUint32(hdr[4:], uint32(padded-8))
	if _, err := f.Write(hdr[:]); err != nil {
		return err
	}
	if _, err := f.Write(meta); err != nil {
		return err
	}
	if err := f.pad(8); err != nil {
		return err
	}
	blk.meta = int32(padded)
	if body != nil {
		n, err := body()
		if err != nil {
			return err
		}
		blk.body = n
	}
	if f.err != nil {
		return f.err
	}
	switch typ {
	case arrowHeaderDictionary:
		f.dicts = append(f.dicts, blk)
	case arrowHeaderRecordBatch:
		f.recs = append(f.recs, blk)
	}
	return nil
}

// arrowFBRoot returns the position of a flatbuffer's root table.
func arrowFBRoot(b []byte) (int, bool) {
	if len(b) < 8 {
		return 0, false
	}
	tab := int(binary.LittleEndian.Uint32(b))
	return tab, tab+4 <= len(b)
}

// arrowFBVtable returns the position of a table's vtable.
func arrowFBVtable(b []byte, tab int) (int, bool) {
	vt := tab - int(int32(binary.LittleEndian.Uint32(b[tab:])))
	return vt, vt >= 0 && vt+4 <= len(b)
}

// arrowFBField returns the offset within table tab of field i, 0 if absent.
func arrowFBField(b []byte, tab, i int) (int, bool) {
	vt, ok := arrowFBVtable(b, tab)
	if !ok {
		return 0, false
	}
	vsize := int(binary.LittleEndian.Uint16(b[vt:]))
	at := 4 + 2*i
	if at+2 > vsize || vt+at+2 > len(b) {
		return 0, true
	}
	off := int(binary.LittleEndian.Uint16(b[vt+at:]))
	return off, tab+off < len(b)
}

// arrowSchemaMessage serialises schema as an IPC schema message (flatbuffer
// metadata only) with arrow-go's own encoder.
func arrowSchemaMessage(schema *arrow.Schema, mem memory.Allocator) ([]byte, error) {
	var c arrowCapture
	w := ipc.NewWriterWithPayloadWriter(&c, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err := w.Close(); err != nil {
		return nil, err
	}
	if c.schema == nil {
		return nil, errors.New("arrow wrote no schema message")
	}
	return c.schema, nil
}

// arrowCapture keeps the first payload's metadata.
type arrowCapture struct{ schema []byte }

func (c *arrowCapture) Start() error { return nil }
func (c *arrowCapture) Close() error { return nil }
func (c *arrowCapture) WritePayload(p ipc.Payload) error {
	meta := p.Meta()
	if meta == nil {
		return nil
	}
	defer meta.Release()
	if c.schema == nil {
		c.schema = append([]byte(nil), meta.Bytes()...)
	}
	return nil
}

// arrowFooter builds the footer flatbuffer from a schema message and the
// file's blocks. The result's length is a multiple of 8.
func arrowFooter(schemaMsg []byte, dicts, recs []arrowBlock) ([]byte, error) {
	b := schemaMsg
	msg, ok := arrowFBRoot(b)
	if !ok {
		return nil, errors.New("malformed schema message")
	}
	off, ok := arrowFBField(b, msg, 2) // Message.header
	if !ok || off == 0 || msg+off+4 > len(b) {
		return nil, errors.New("schema message without header")
	}
	sch := msg + off + int(binary.LittleEndian.Uint32(b[msg+off:]))
	if sch+4 > len(b) {
		return nil, errors.New("schema message header out of range")
	}
	svt, ok := arrowFBVtable(b, sch)
	if !ok {
		return nil, errors.New("schema table without vtable")
	}
	start := min(sch, svt)
	tail := b[start:]

	// Layout, offsets from the start of the footer:
	//	0   root offset -> table at 16
	//	4   vtable: size 12, table size 20, fields version@16 schema@4 dicts@8 recs@12
	//	16  table: soffset to vtable (12), schema, dicts, recs offsets, version, pad
	//	36  dictionaries vector (length, then 8-aligned 24-byte blocks)
	//	    4 bytes pad, record batches vector
	//	    pad so that the schema tail ends the buffer at a multiple of 8
	const tab = 16
	dv := 36
	rv := dv + 4 + 24*len(dicts) + 4
	end := rv + 4 + 24*len(recs)
	padTail := (8 - len(tail)%8) % 8
	tailAt := end + padTail
	out := make([]byte, tailAt+len(tail))
	le := binary.LittleEndian
	le.PutUint32(out[0:], tab)
	le.PutUint16(out[4:], 12)
	le.PutUint16(out[6:], 20)
	le.PutUint16(out[8:], 16) // version
	le.PutUint16(out[10:], 4) // schema
	le.PutUint16(out[12:], 8) // dictionaries
	le.PutUint16(out[14:], 12)
	le.PutUint32(out[tab:], uint32(tab-4))
	schemaAt := tailAt + (sch - start)
	le.PutUint32(out[tab+4:], uint32(schemaAt-(tab+4)))
	le.PutUint32(out[tab+8:], uint32(dv-(tab+8)))
	le.PutUint32(out[tab+12:], uint32(rv-(tab+12)))
	le.PutUint16(out[tab+16:], arrowMetadataV5)
	putBlocks := func(at int, blks []arrowBlock) {
		le.PutUint32(out[at:], uint32(len(blks)))
		for i, blk := range blks {
			p := at + 4 + 24*i
			le.PutUint64(out[p:], uint64(blk.offset))
			le.PutUint32(out[p+8:], uint32(blk.meta))
			le.PutUint64(out[p+16:], uint64(blk.body))
		}
	}
	putBlocks(dv, dicts)
	putBlocks(rv, recs)
	copy(out[tailAt:], tail)
	return out, nil
}

// finish ends the stream and writes the footer carrying schemaMsg's schema,
// then flushes. The file is complete when it returns nil.
func (f *arrowFile) finish(schemaMsg []byte) error {
	footer, err := arrowFooter(schemaMsg, f.dicts, f.recs)
	if err != nil {
		return fmt.Errorf("building footer: %w", err)
	}
	if _, err := f.Write(arrowEOS); err != nil {
		return err
	}
	if _, err := f.Write(footer); err != nil {
		return err
	}
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(footer)))
	if _, err := f.Write(n[:]); err != nil {
		return err
	}
	if _, err := f.Write(arrowMagic); err != nil {
		return err
	}
	return f.w.Flush()
}
