// Package depcheck holds the project's import policy as a test, after
// golang/go's src/go/build/deps_test.go: a statement of which package may
// import which, checked on every run.
package depcheck

import (
	"go/build"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/internal/shared"
)

const module = "github.com/tracesched/tracesched"

// policy lists, for each package of the module (path relative to the module
// root; "scheduler/*" matches every scheduler), the module packages and
// third-party module prefixes its non-test files may import. The standard
// library is always allowed. Imports flow one way: trace at the bottom;
// parse/blktrace, replay, diff and synth over it; the schedulers and device
// over replay; tui over diff and trace; cmd on top. The Arrow codec
// (trace/arrowfile) and the btt-style summary (stats) sit beside the model,
// over trace, so the model, the engine and the schedulers build without
// arrow-go (see noArrow).
var policy = map[string][]string{
	"trace":             {},
	"trace/arrowfile":   {"trace", "github.com/apache/arrow/go/v15", "github.com/klauspost/compress"},
	"trace/parquetfile": {"trace", "trace/arrowfile", "github.com/apache/arrow/go/v15", "github.com/klauspost/compress"},
	"stats":             {"trace"},
	"parse/blktrace":    {"trace", "github.com/klauspost/compress"},
	"replay":            {"trace", "internal/column"},
	"scheduler/*":       {"replay", "trace"},
	"device":            {"replay", "trace"},
	"diff":              {"trace", "internal/column"},
	"synth":             {"trace"},
	"manifest":          {"trace"},
	"record":            {"manifest", "trace"},
	"tui":               {"diff", "trace", "tui/*", "github.com/charmbracelet/", "github.com/muesli/termenv", "golang.org/x/term"},
	"report":            {"diff", "trace", "report/svgplot"},
	"report/svgplot":    {},
	"internal/nofetch":  {},
	"internal/shared":   {},
	"internal/column":   {},
	"internal/fixture":  {"trace", "parse/blktrace", "internal/shared"},
	"cmd/tracesched":    {"*"},

	// The replay's data flow, for the command, bench/ and the tests.
	"internal/pipeline": {"trace", "replay", "device", "diff"},
}

// noArrow lists the packages (rules as in policy) that must not depend on
// arrow-go, directly or through another package of the module: the model, the
// engine and the scheduler models.
var noArrow = []string{"trace", "replay", "scheduler/*"}

const arrowModule = "github.com/apache/arrow/go/"

func rule(rel string) ([]string, bool) {
	if r, ok := policy[rel]; ok {
		return r, true
	}
	if strings.HasPrefix(rel, "scheduler/") {
		return policy["scheduler/*"], true
	}
	if strings.HasPrefix(rel, "tui/") {
		return policy["tui"], true
	}
	return nil, false
}

func allowed(imp string, allow []string) bool {
	for _, a := range allow {
		switch {
		case a == "*":
			return true
		case strings.HasSuffix(a, "/*"): // a module subtree
			if strings.HasPrefix(imp, module+"/"+strings.TrimSuffix(a, "*")) {
				return true
			}
		case strings.Contains(a, "."): // third-party prefix
			if strings.HasPrefix(imp, a) {
				return true
			}
		default:
			if imp == module+"/"+a {
				return true
			}
		}
	}
	return false
}

func TestImportPolicy(t *testing.T) {
	root := shared.Root()
	if root == "" {
		t.Fatal("module root not found")
	}
	var pkgs []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "fixtures") {
			return filepath.SkipDir
		}
		pkgs = append(pkgs, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(pkgs)
	checked := 0
	for _, dir := range pkgs {
		p, err := build.ImportDir(dir, 0)
		if err != nil {
			continue // no Go files, or only tests
		}
		rel, _ := filepath.Rel(root, dir)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "bench/") || rel == "internal/depcheck" {
			continue // programs for measurement, and this test
		}
		allow, ok := rule(rel)
		if !ok {
			t.Errorf("package %s has no entry in the import policy: add one", rel)
			continue
		}
		checked++
		for _, imp := range p.Imports {
			if !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
				continue // standard library
			}
			if !allowed(imp, allow) {
				t.Errorf("%s imports %s, which the policy does not allow", rel, imp)
			}
		}
	}
	if checked < 3 {
		t.Fatalf("checked only %d packages: the walk is broken", checked)
	}
}

// TestNoArrowBelowCodec checks noArrow on the transitive imports (go list
// -deps would need the go command; the walk follows module packages through
// go/build).
func TestNoArrowBelowCodec(t *testing.T) {
	root := shared.Root()
	if root == "" {
		t.Fatal("module root not found")
	}
	var walk func(rel string, seen map[string]bool) (string, bool)
	walk = func(rel string, seen map[string]bool) (string, bool) {
		if seen[rel] {
			return "", false
		}
		seen[rel] = true
		p, err := build.ImportDir(filepath.Join(root, filepath.FromSlash(rel)), 0)
		if err != nil {
			return "", false
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, arrowModule) {
				return rel + " -> " + imp, true
			}
			if sub, ok := strings.CutPrefix(imp, module+"/"); ok {
				if chain, bad := walk(sub, seen); bad {
					return rel + " -> " + chain, true
				}
			}
		}
		return "", false
	}
	checked := 0
	for _, pat := range noArrow {
		dirs := []string{pat}
		if base, ok := strings.CutSuffix(pat, "/*"); ok {
			ents, err := os.ReadDir(filepath.Join(root, base))
			if err != nil {
				t.Fatal(err)
			}
			dirs = dirs[:0]
			for _, e := range ents {
				if e.IsDir() && e.Name() != "testdata" {
					dirs = append(dirs, base+"/"+e.Name())
				}
			}
		}
		for _, d := range dirs {
			if _, err := build.ImportDir(filepath.Join(root, filepath.FromSlash(d)), 0); err != nil {
				continue
			}
			checked++
			if chain, bad := walk(d, map[string]bool{}); bad {
				t.Errorf("%s links arrow-go: %s", d, chain)
			}
		}
	}
	if checked < 4 {
		t.Fatalf("checked only %d packages against noArrow: the walk is broken", checked)
	}
}
