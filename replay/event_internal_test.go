package replay

import (
	"reflect"
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// TestSetEventSetsEveryField: setEvent leaves nothing of the event emitted
// before (every field of trace.Event filled in first, a new field
// included), and sets what it is given.
func TestSetEventSetsEveryField(t *testing.T) {
	e := &Engine{w: &Workload{Dev: trace.Dev(8<<20 | 16)}}
	v := reflect.ValueOf(&e.ev).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.String:
			f.SetString("stale")
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			f.SetInt(-7)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.SetUint(7)
		default:
			t.Fatalf("trace.Event.%s: kind %s not filled by the test", v.Type().Field(i).Name, f.Kind())
		}
	}
	e.setEvent(1234, trace.ActionIssue, trace.CatRead|trace.CatIssue, 2048, 4096, 42, 9, "fio")
	want := trace.Event{Time: 1234, Dev: e.w.Dev, Action: trace.ActionIssue, Cat: trace.CatRead | trace.CatIssue,
		Sector: 2048, Bytes: 4096, PID: 42, Cgroup: 9, Comm: "fio"}
	if e.ev != want {
		t.Errorf("setEvent: %+v\nwant %+v", e.ev, want)
	}
}
