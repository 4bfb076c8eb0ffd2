package policy

import (
	"bufio"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
)

// The reference docs list every field the parsers accept, and no other:
// adding a field to a decoding struct without documenting it, or
// documenting one that does not exist, fails here.
func TestReferenceDocsCoverParsers(t *testing.T) {
	for _, tc := range []struct {
		doc string
		typ reflect.Type
	}{
		{"../docs/manifest.md", reflect.TypeFor[kernel.Manifest]()}, // ParseManifest decodes into it, rejecting unknown members
		{"../docs/profile.md", reflect.TypeFor[rawProfile]()},
	} {
		t.Run(tc.doc, func(t *testing.T) {
			parsed := map[string]bool{}
			jsonPaths(tc.typ, "", parsed)
			documented := docFields(t, tc.doc)
			for _, p := range slices.Sorted(maps.Keys(parsed)) {
				if !documented[p] {
					t.Errorf("field %s is parsed but not documented in %s", p, tc.doc)
				}
			}
			for _, p := range slices.Sorted(maps.Keys(documented)) {
				if !parsed[p] {
					t.Errorf("%s documents %s, which the parser does not have", tc.doc, p)
				}
			}
			if len(parsed) < 5 {
				t.Fatalf("only %d fields found: %v", len(parsed), parsed)
			}
		})
	}
}

var jsonValueType = reflect.TypeFor[jsontext.Value]()

// jsonPaths adds the dotted JSON path of every member t decodes: arrays of
// objects as name[], maps by name as name.*; a raw JSON value is a leaf.
func jsonPaths(t reflect.Type, prefix string, out map[string]bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == jsonValueType:
		return
	case t.Kind() == reflect.Slice:
		if e := deepElem(t.Elem()); e.Kind() == reflect.Struct {
			jsonPaths(e, prefix+"[]", out)
		}
	case t.Kind() == reflect.Map:
		jsonPaths(t.Elem(), prefix+".*", out)
	case t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			p := name
			if prefix != "" {
				p = prefix + "." + name
			}
			out[p] = true
			jsonPaths(f.Type, p, out)
		}
	}
}

func deepElem(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

var docFieldRE = regexp.MustCompile("^\\| `([^`]+)` \\|")

// docFields reads the first column of every table whose header starts
// with "| field |".
func docFields(t *testing.T, path string) map[string]bool {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "| field |"):
			in = true
		case !strings.HasPrefix(line, "|"):
			in = false
		case in && strings.HasPrefix(line, "| ---"):
		case in:
			m := docFieldRE.FindStringSubmatch(line)
			if m == nil {
				t.Errorf("%s: field row without a `path` in its first cell: %s", path, line)
				continue
			}
			if out[m[1]] {
				t.Errorf("%s documents %s twice", path, m[1])
			}
			out[m[1]] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// The walk itself: a sanity check that it sees through pointers, slices
// and maps, so the docs test cannot pass by finding nothing.
func TestJSONPaths(t *testing.T) {
	got := map[string]bool{}
	jsonPaths(reflect.TypeFor[rawProfile](), "", got)
	for _, want := range []string{"endpoints", "endpoints.*.publish.packages", "endpoints.*.toolNames", "templates.*.maxHeld"} {
		if !got[want] {
			t.Errorf("missing %s in %v", want, slices.Sorted(maps.Keys(got)))
		}
	}
}

// jsonBlocks returns the ```json blocks of a doc, in order.
func jsonBlocks(t *testing.T, path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, part := range strings.Split(string(data), "```json\n")[1:] {
		block, _, ok := strings.Cut(part, "```")
		if !ok {
			t.Fatalf("%s: unterminated json block", path)
		}
		blocks = append(blocks, block)
	}
	return blocks
}

// The docs' examples are what they claim: the manifest example is a valid,
// tool-ready manifest; every profile example is a valid profile.
func TestReferenceDocExamples(t *testing.T) {
	blocks := jsonBlocks(t, "../docs/manifest.md")
	if len(blocks) == 0 {
		t.Fatal("docs/manifest.md has no json example")
	}
	m, err := kernel.ParseManifest([]byte(blocks[0]))
	if err != nil {
		t.Fatalf("the minimal example: %v", err)
	}
	for i := range m.Commands {
		if ok, why := kernel.Eligibility(m.APIVersion, &m.Commands[i]); !ok {
			t.Errorf("the minimal example's %s is not tool-ready: %s", m.Commands[i].ID, why)
		}
	}
	blocks = jsonBlocks(t, "../docs/profile.md")
	if len(blocks) < 3 {
		t.Fatalf("docs/profile.md has %d json examples", len(blocks))
	}
	for i, b := range blocks {
		if _, err := ParseProfile([]byte(b)); err != nil {
			t.Errorf("profile example %d: %v\n%s", i+1, err, b)
		}
	}
}
