package device_test
import ("testing";"os";"path/filepath";"github.com/tracesched/tracesched/device")
func TestZZDump(t *testing.T){
	name := os.Getenv("ZZ")
	if name == "" { t.Skip() }
	reqs := readRequests(t, name)
	device.ZZDump(reqs, "/tmp/devtool/"+filepath.Base(name)+".csv")
}
func TestZZFloor(t *testing.T){
	name := os.Getenv("ZZ")
	if name == "" { t.Skip() }
	t.Log(device.ZZFloor(readRequests(t, name)))
}
