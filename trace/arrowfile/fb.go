package arrowfile

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
)

// A small flatbuffer verifier for the parts of Arrow's metadata that
// arrow-go v15 trusts (see read.go): it checks tables, references and
// vector lengths against the buffer, so that arrow-go's decoding cannot
// allocate from a forged count or recurse without bound.

// arrowFBCheckTable checks that table tab and its vtable lie in b.
func arrowFBCheckTable(b []byte, tab int) error {
	if tab < 0 || tab+4 > len(b) {
		return errors.New("table out of range")
	}
	vt := tab - int(int32(binary.LittleEndian.Uint32(b[tab:])))
	if vt < 0 || vt+4 > len(b) {
		return errors.New("vtable out of range")
	}
	vsize, osize := int(binary.LittleEndian.Uint16(b[vt:])), int(binary.LittleEndian.Uint16(b[vt+2:]))
	if vsize < 4 || vsize%2 != 0 || vt+vsize > len(b) || tab+osize > len(b) {
		return errors.New("vtable out of range")
	}
	for i := 4; i < vsize; i += 2 {
		if off := int(binary.LittleEndian.Uint16(b[vt+i:])); off != 0 && (off < 4 || off >= osize) {
			return errors.New("field out of its table")
		}
	}
	return nil
}

// arrowFBRef follows the reference in field i of table tab (checked by
// arrowFBCheckTable); ok is false when the field is absent.
func arrowFBRef(b []byte, tab, i int) (pos int, ok bool, err error) {
	off, _ := arrowFBField(b, tab, i)
	if off == 0 {
		return 0, false, nil
	}
	p := tab + off
	if p+4 > len(b) {
		return 0, false, errors.New("reference out of range")
	}
	q := p + int(binary.LittleEndian.Uint32(b[p:]))
	if q+4 > len(b) {
		return 0, false, errors.New("reference out of range")
	}
	return q, true, nil
}

// arrowFBVector returns the first element and length of the vector in field
// i of table tab, checking that size-byte elements fit in b.
func arrowFBVector(b []byte, tab, i, size int) (start, n int, ok bool, err error) {
	q, ok, err := arrowFBRef(b, tab, i)
	if err != nil || !ok {
		return 0, 0, ok, err
	}
	n = int(binary.LittleEndian.Uint32(b[q:]))
	if n > (len(b)-q-4)/size {
		return 0, 0, false, fmt.Errorf("vector of %d elements exceeds its buffer", n)
	}
	return q + 4, n, true, nil
}

// arrowFBTables checks a vector of tables in field i and calls f on each.
func arrowFBTables(b []byte, tab, i int, f func(int) error) error {
	v, n, ok, err := arrowFBVector(b, tab, i, 4)
	if err != nil || !ok {
		return err
	}
	for k := 0; k < n; k++ {
		p := v + 4*k
		t := p + int(binary.LittleEndian.Uint32(b[p:]))
		if err := arrowFBCheckTable(b, t); err != nil {
			return err
		}
		if err := f(t); err != nil {
			return err
		}
	}
	return nil
}

// arrowFBString returns the string in field i of table tab.
func arrowFBString(b []byte, tab, i int) (string, error) {
	v, n, _, err := arrowFBVector(b, tab, i, 1)
	if err != nil {
		return "", err
	}
	return string(b[v : v+n]), nil
}

// arrowFBKeyValues checks a [KeyValue] vector and returns it.
func arrowFBKeyValues(b []byte, tab, i int) (keys, vals []string, err error) {
	err = arrowFBTables(b, tab, i, func(kv int) error {
		k, err := arrowFBString(b, kv, 0)
		if err != nil {
			return err
		}
		v, err := arrowFBString(b, kv, 1)
		keys, vals = append(keys, k), append(vals, v)
		return err
	})
	return keys, vals, err
}

// arrowFBCheckField checks a Field table:
//
//	table Field { name: string; nullable: bool; type: Type (union: type byte, table);
//	              dictionary: DictionaryEncoding; children: [Field]; custom_metadata: [KeyValue]; }
func arrowFBCheckField(b []byte, f, depth int) error {
	if depth > 32 {
		return errors.New("fields nested more than 32 deep")
	}
	if _, err := arrowFBString(b, f, 0); err != nil {
		return err
	}
	if t, ok, err := arrowFBRef(b, f, 3); err != nil {
		return err
	} else if ok {
		if err := arrowFBCheckTable(b, t); err != nil {
			return err
		}
		var typ byte
		if off, _ := arrowFBField(b, f, 2); off != 0 {
			typ = b[f+off]
		}
		switch typ {
		case 10: // Timestamp { unit; timezone: string }
			if _, err := arrowFBString(b, t, 1); err != nil {
				return err
			}
		case 14: // Union { mode; typeIds: [int] }
			if _, _, _, err := arrowFBVector(b, t, 1, 4); err != nil {
				return err
			}
		}
	}
	if d, ok, err := arrowFBRef(b, f, 4); err != nil {
		return err
	} else if ok {
		if err := arrowFBCheckTable(b, d); err != nil {
			return err
		}
		if it, ok, err := arrowFBRef(b, d, 1); err != nil {
			return err
		} else if ok {
			if err := arrowFBCheckTable(b, it); err != nil {
				return err
			}
		}
	}
	if err := arrowFBTables(b, f, 5, func(c int) error { return arrowFBCheckField(b, c, depth+1) }); err != nil {
		return err
	}
	_, _, err := arrowFBKeyValues(b, f, 6)
	return err
}

// arrowFBSchemaMeta checks a Schema table and returns its custom metadata:
//
//	table Schema { endianness: short; fields: [Field]; custom_metadata: [KeyValue]; features: [long]; }
func arrowFBSchemaMeta(b []byte, sch int) (arrow.Metadata, error) {
	if err := arrowFBCheckTable(b, sch); err != nil {
		return arrow.Metadata{}, err
	}
	if err := arrowFBTables(b, sch, 1, func(f int) error { return arrowFBCheckField(b, f, 0) }); err != nil {
		return arrow.Metadata{}, err
	}
	if _, _, _, err := arrowFBVector(b, sch, 3, 8); err != nil {
		return arrow.Metadata{}, err
	}
	keys, vals, err := arrowFBKeyValues(b, sch, 2)
	if err != nil {
		return arrow.Metadata{}, err
	}
	return arrow.NewMetadata(keys, vals), nil
}

// arrowFBLayout returns the field nodes and buffers a record batch of the
// schema at sch needs, and the buffers of the dictionary batch of each
// dictionary id. arrow-go v15's decoder reads node and buffer entries by
// index without checking the vectors' lengths, so the reader checks them
// against these counts. Only flat schemas of primitive, boolean and
// string or binary columns (dictionary-encoded or not) are supported.
func arrowFBLayout(b []byte, sch int) (nodes, bufs int, dicts map[int64]int, err error) {
	dicts = make(map[int64]int)
	err = arrowFBTables(b, sch, 1, func(f int) error {
		if _, n, ok, err := arrowFBVector(b, f, 5, 4); err != nil {
			return err
		} else if ok && n > 0 {
			return errors.New("nested columns are not supported")
		}
		var typ byte
		if off, _ := arrowFBField(b, f, 2); off != 0 {
			typ = b[f+off]
		}
		k, err := arrowTypeBuffers(typ)
		if err != nil {
			return err
		}
		nodes++
		if d, ok, err := arrowFBRef(b, f, 4); err != nil {
			return err
		} else if ok {
			// table DictionaryEncoding { id: long; indexType: Int; isOrdered: bool; ... }
			var id int64
			if off, _ := arrowFBField(b, d, 0); off != 0 && d+off+8 <= len(b) {
				id = int64(binary.LittleEndian.Uint64(b[d+off:]))
			}
			dicts[id] = k
			k = 2 // validity and indices
		}
		bufs += k
		return nil
	})
	return nodes, bufs, dicts, err
}

// arrowTypeBuffers returns the number of buffers of a column of a Type
// union type (format/Schema.fbs) without children.
func arrowTypeBuffers(typ byte) (int, error) {
	switch typ {
	case 2, 3, 6, 7, 8, 9, 10, 11, 15, 18: // Int FloatingPoint Bool Decimal Date Time Timestamp Interval FixedSizeBinary Duration
		return 2, nil
	case 4, 5, 19, 20: // Binary Utf8 LargeBinary LargeUtf8
		return 3, nil
	}
	return 0, fmt.Errorf("unsupported column type %d", typ)
}
