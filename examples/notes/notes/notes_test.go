package notes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/rukh-dev/rukh/kernel"
)

const manifestPath = "../package/rukh-extension.json"

func newStore(t *testing.T) *Store {
	t.Helper()
	return NewStore(filepath.Join(t.TempDir(), ".rukh-notes"))
}

func TestStoreAddListGetDelete(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)

	// reading an empty store neither fails nor creates anything
	got, total, err := s.List(ctx, "", 0)
	if err != nil || len(got) != 0 || total != 0 {
		t.Fatalf("empty List = %v, %d, %v", got, total, err)
	}
	if _, err := os.Stat(s.dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("reading created %s (stat: %v)", s.dir, err)
	}

	adds := []Note{
		{Title: "a", Priority: 1, Tags: []string{"home"}},
		{Title: "b", Priority: 2, Body: "bee"},
		{Title: "c", Priority: 3, Tags: []string{"home", "work"}},
		{Title: "d", Priority: 4, Tags: []string{"work"}},
	}
	for i, n := range adds {
		id, err := s.Add(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if id != int64(i+1) {
			t.Fatalf("add %d: id %d, want %d", i, id, i+1)
		}
	}

	for _, tc := range []struct {
		tag       string
		limit     int
		wantIDs   []int64
		wantTotal int
	}{
		{"", 0, []int64{4, 3, 2, 1}, 4},
		{"", 2, []int64{4, 3}, 4},
		{"home", 0, []int64{3, 1}, 2},
		{"home", 1, []int64{3}, 2},
		{"work", 10, []int64{4, 3}, 2},
		{"none", 0, nil, 0},
	} {
		t.Run(fmt.Sprintf("list tag=%q limit=%d", tc.tag, tc.limit), func(t *testing.T) {
			got, total, err := s.List(ctx, tc.tag, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for _, n := range got {
				ids = append(ids, n.ID)
			}
			if !slices.Equal(ids, tc.wantIDs) || total != tc.wantTotal {
				t.Fatalf("ids %v total %d, want %v %d", ids, total, tc.wantIDs, tc.wantTotal)
			}
		})
	}

	n, err := s.Get(ctx, 2)
	if err != nil || n.Title != "b" || n.Body != "bee" || n.Tags == nil || n.Created.IsZero() {
		t.Fatalf("Get(2) = %+v, %v", n, err)
	}

	var missing *NotFoundError
	if _, err := s.Get(ctx, 9); !errors.As(err, &missing) || missing.ID != 9 || err.Error() != "no note with id 9" {
		t.Fatalf("Get(9) error = %v", err)
	}
	if err := s.Delete(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, 4); !errors.As(err, &missing) || missing.ID != 4 {
		t.Fatalf("second Delete(4) error = %v", err)
	}
	// a deleted id is never reused
	if id, err := s.Add(ctx, Note{Title: "e", Priority: 3}); err != nil || id != 5 {
		t.Fatalf("Add after delete = %d, %v; want 5", id, err)
	}

	// the file is private and no temporary file is left behind
	fi, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("notes.json mode %v, want 0600", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(s.dir)
	for _, e := range entries {
		if e.Name() != "notes.json" && e.Name() != "notes.lock" {
			t.Errorf("unexpected file %s in the store", e.Name())
		}
	}
}

func TestStoreConcurrentAdds(t *testing.T) {
	// Separate Stores open the lock file separately, as separate processes
	// would: flock serialises them, so no add is lost.
	dir := filepath.Join(t.TempDir(), "notes")
	const workers, each = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := NewStore(dir)
			for i := 0; i < each; i++ {
				if _, err := s.Add(context.Background(), Note{Title: fmt.Sprintf("w%d-%d", w, i), Priority: 3}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, total, err := NewStore(dir).List(context.Background(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if total != workers*each {
		t.Fatalf("total %d, want %d", total, workers*each)
	}
	for i, n := range got { // newest first, ids 1..N without gaps
		if want := int64(workers*each - i); n.ID != want {
			t.Fatalf("note %d has id %d, want %d", i, n.ID, want)
		}
	}
}

func TestStoreLockHonoursCancel(t *testing.T) {
	s := newStore(t)
	if _, err := s.Add(context.Background(), Note{Title: "x"}); err != nil {
		t.Fatal(err)
	}
	unlock, err := s.lock(context.Background(), true) // another writer holds it
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	cause := errors.New("cancelled by the test")
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(50*time.Millisecond, func() { cancel(cause) })
	start := time.Now()
	if _, err := s.Add(ctx, Note{Title: "y"}); !errors.Is(err, cause) {
		t.Fatalf("Add while locked = %v, want the cancel cause", err)
	}
	if _, _, err := s.List(ctx, "", 0); !errors.Is(err, cause) { // readers wait for writers too
		t.Fatalf("List while locked = %v, want the cancel cause", err)
	}
	if d := time.Since(start); d > 30*time.Second { // the lock is never released: only the cancel ends the wait
		t.Fatalf("waited %v after cancel", d)
	}
}

func TestStoreCorrupt(t *testing.T) {
	for _, tc := range []struct{ name, content, want string }{
		{"truncated", `{"format":"rukh-notes/1","nextId":2,"notes":[`, "unexpected EOF"},
		{"not json", "hello", "invalid character"},
		{"other format", `{"format":"other/9","nextId":1,"notes":[]}`, `format is "other/9"`},
		{"unknown member", `{"format":"rukh-notes/1","nextId":1,"notes":[],"x":1}`, "unknown"},
		{"duplicate member", `{"format":"rukh-notes/1","nextId":1,"nextId":2,"notes":[]}`, "duplicate"},
		{"id not below nextId", `{"format":"rukh-notes/1","nextId":2,"notes":[{"id":2,"title":"x","body":"","priority":3,"tags":[],"created":"2026-01-01T00:00:00Z"}]}`, "out of order"},
		{"ids out of order", `{"format":"rukh-notes/1","nextId":9,"notes":[{"id":3,"title":"x","body":"","priority":3,"tags":[],"created":"2026-01-01T00:00:00Z"},{"id":2,"title":"y","body":"","priority":3,"tags":[],"created":"2026-01-01T00:00:00Z"}]}`, "out of order"},
		{"zero nextId", `{"format":"rukh-notes/1","nextId":0,"notes":[]}`, "not positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			if err := os.MkdirAll(s.dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(s.Path(), []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, err := s.List(context.Background(), "", 0)
			var corrupt *CorruptError
			if !errors.As(err, &corrupt) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "is corrupted") {
				t.Fatalf("List error = %v, want a CorruptError mentioning %q", err, tc.want)
			}
			// a write never replaces a file it cannot read
			if _, err := s.Add(context.Background(), Note{Title: "x"}); !errors.As(err, &corrupt) {
				t.Fatalf("Add error = %v, want a CorruptError", err)
			}
			if b, _ := os.ReadFile(s.Path()); string(b) != tc.content {
				t.Fatalf("the corrupted file was rewritten: %s", b)
			}
		})
	}
}

func TestHomeStore(t *testing.T) {
	t.Setenv("HOME", "/somewhere/home")
	s, err := HomeStore()
	if err != nil || s.Path() != "/somewhere/home/.rukh-notes/notes.json" {
		t.Fatalf("HomeStore() = %v, %v", s, err)
	}
	for _, home := range []string{"", "relative/home"} {
		t.Setenv("HOME", home)
		if _, err := HomeStore(); err == nil || !strings.Contains(err.Error(), "HOME") {
			t.Fatalf("HOME=%q: err = %v", home, err)
		}
	}
}

// report is the message the extension sent back.
type report struct {
	Type          string `json:"type"`
	InvocationID  string `json:"invocationId"`
	Outcome       string `json:"outcome"`
	Reason        string `json:"reason"`
	CommandResult struct {
		Kind string         `json:"kind"`
		Text string         `json:"text"`
		Data jsontext.Value `json:"data"`
	} `json:"commandResult"`
}

// call runs one invocation through the SDK over an in-memory channel that
// stays open (as rukh's does) until the handler has answered.
func call(t *testing.T, s *Store, command, input string) (int, report) {
	t.Helper()
	ext := NewExtension(func() (*Store, error) { return s, nil })
	pr, pw := io.Pipe()
	defer pw.Close()
	invoke := fmt.Sprintf(`{"type":"invoke","invocationId":"inv_test","command":%q,"input":%s,"explicit":[],"interactive":false,"deadlineMs":30000}`+"\n", command, input)
	var out strings.Builder
	ch := struct {
		io.Reader
		io.Writer
	}{io.MultiReader(strings.NewReader(invoke), pr), &out}
	code, err := ext.Serve(context.Background(), ch)
	if err != nil {
		t.Fatalf("%s: Serve: %v", command, err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	var rep report
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rep); err != nil {
		t.Fatalf("%s: report %q: %v", command, out.String(), err)
	}
	if rep.Type != "report" || rep.InvocationID != "inv_test" {
		t.Fatalf("%s: not a report for inv_test: %s", command, out.String())
	}
	return code, rep
}

// resultSchemas compiles the structured result schemas of the real
// manifest, which rukh checks every result against.
func resultSchemas(t *testing.T) (map[string]*kernel.ResultSchema, *kernel.Manifest) {
	t.Helper()
	raw, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	m, err := kernel.ParseManifest(raw)
	if err != nil {
		t.Fatalf("the example manifest is invalid: %v", err)
	}
	schemas := map[string]*kernel.ResultSchema{}
	for _, c := range m.Commands {
		if r := c.Execute.Result; r != nil && r.Kind == kernel.ResultStructured {
			sch, err := kernel.CompileResultSchema(r.Schema)
			if err != nil {
				t.Fatalf("%s: %v", c.ID, err)
			}
			schemas[c.ID] = sch
		}
	}
	return schemas, m
}

func TestHandlers(t *testing.T) {
	schemas, _ := resultSchemas(t)
	s := newStore(t)
	type step struct {
		command, input string
		code           int
		outcome        string
		kind           string // result kind, "" for none
		want           string // the text, the data (compact JSON) or the reason
	}
	for i, st := range []step{
		{"notes.list", `{"limit":20}`, 0, "succeeded", "structured", `{"notes":[],"total":0}`},
		{"notes.add", `{"title":"buy milk","tags":["home","errands","home"],"priority":2,"body":"two litres"}`, 0, "succeeded", "structured", `{"id":1}`},
		{"notes.add", `{"title":"ship it","priority":5}`, 0, "succeeded", "structured", `{"id":2}`},
		{"notes.list", `{"limit":20}`, 0, "succeeded", "structured", `{"notes":[{"id":2,"title":"ship it","priority":5,"tags":[]},{"id":1,"title":"buy milk","priority":2,"tags":["home","errands"]}],"total":2}`},
		{"notes.list", `{"tag":"home","limit":20}`, 0, "succeeded", "structured", `{"notes":[{"id":1,"title":"buy milk","priority":2,"tags":["home","errands"]}],"total":1}`},
		{"notes.list", `{"limit":1}`, 0, "succeeded", "structured", `{"notes":[{"id":2,"title":"ship it","priority":5,"tags":[]}],"total":2}`},
		{"notes.show", `{"id":1}`, 0, "succeeded", "structured", `{"id":1,"title":"buy milk","body":"two litres","priority":2,"tags":["home","errands"]}`},
		{"notes.show", `{"id":2}`, 0, "succeeded", "structured", `{"id":2,"title":"ship it","body":"","priority":5,"tags":[]}`},
		{"notes.show", `{"id":7}`, 1, "command_failed", "", "no note with id 7"},
		{"notes.delete", `{"id":1}`, 0, "succeeded", "text", "deleted note 1"},
		{"notes.delete", `{"id":1}`, 1, "command_failed", "", "no note with id 1"},
		{"notes.show", `{"id":1}`, 1, "command_failed", "", "no note with id 1"},
	} {
		t.Run(fmt.Sprintf("%d %s %s", i, st.command, st.input), func(t *testing.T) {
			code, rep := call(t, s, st.command, st.input)
			if code != st.code || rep.Outcome != st.outcome || rep.CommandResult.Kind != st.kind {
				t.Fatalf("exit %d outcome %q kind %q (reason %q), want %d %q %q", code, rep.Outcome, rep.CommandResult.Kind, rep.Reason, st.code, st.outcome, st.kind)
			}
			var got string
			switch st.kind {
			case "structured":
				got = string(rep.CommandResult.Data)
				if err := schemas[st.command].Check(rep.CommandResult.Data, 0); err != nil {
					t.Errorf("data breaks the manifest's result schema: %v", err)
				}
			case "text":
				got = rep.CommandResult.Text
			default:
				got = rep.Reason
			}
			if got != st.want {
				t.Fatalf("got  %s\nwant %s", got, st.want)
			}
		})
	}
}

func TestHandlersFailures(t *testing.T) {
	s := newStore(t)
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Path(), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, command := range []string{"notes.add", "notes.list", "notes.show", "notes.delete"} {
		code, rep := call(t, s, command, `{"title":"x","priority":3,"limit":20,"id":1}`)
		if code != 1 || rep.Outcome != "command_failed" || !strings.Contains(rep.Reason, "notes.json is corrupted") {
			t.Errorf("%s on a corrupted file: exit %d, %q: %q", command, code, rep.Outcome, rep.Reason)
		}
	}

	// no usable HOME: a command failure saying so, not a crash
	ext := NewExtension(func() (*Store, error) { return nil, errors.New("HOME is not set") })
	var out strings.Builder
	code, err := ext.Serve(context.Background(), struct {
		io.Reader
		io.Writer
	}{strings.NewReader(`{"type":"invoke","invocationId":"i","command":"notes.list","input":{"limit":20}}` + "\n"), &out})
	if err != nil || code != 1 || !strings.Contains(out.String(), `"reason":"HOME is not set"`) {
		t.Fatalf("no HOME: exit %d, %v, %s", code, err, out.String())
	}
}

func TestListStaysWithinResultLimits(t *testing.T) {
	// 100 notes with 16 long tags each would break rukh's 2,048-member
	// limit: list returns fewer notes and the full total instead of a
	// result rukh must refuse.
	schemas, _ := resultSchemas(t)
	s := newStore(t)
	tags := make([]string, 16)
	for i := range tags {
		tags[i] = fmt.Sprintf("tag-%02d-%s", i, strings.Repeat("x", 24))
	}
	for i := 0; i < 100; i++ {
		if _, err := s.Add(context.Background(), Note{Title: strings.Repeat("t", 200), Priority: 3, Tags: tags}); err != nil {
			t.Fatal(err)
		}
	}
	code, rep := call(t, s, "notes.list", `{"limit":100}`)
	if code != 0 || rep.Outcome != "succeeded" {
		t.Fatalf("exit %d outcome %q: %s", code, rep.Outcome, rep.Reason)
	}
	if err := schemas["notes.list"].Check(rep.CommandResult.Data, 0); err != nil {
		t.Fatalf("the list breaks rukh's result limits: %v", err)
	}
	var res listResult
	if err := json.Unmarshal(rep.CommandResult.Data, &res); err != nil {
		t.Fatal(err)
	}
	if res.Total != 100 || len(res.Notes) == 0 || len(res.Notes) >= 100 {
		t.Fatalf("%d notes of total %d, want fewer than 100 of 100", len(res.Notes), res.Total)
	}
}

func TestManifest(t *testing.T) {
	_, m := resultSchemas(t)
	ext := NewExtension(func() (*Store, error) { return nil, errors.New("unused") })
	for _, c := range m.Commands {
		if c.Execute.Program != "bin/notes" {
			t.Errorf("%s runs %s, want bin/notes", c.ID, c.Execute.Program)
		}
		// every declared command has a handler (Serve reports "no handler"
		// as an error without a report)
		var out strings.Builder
		_, err := ext.Serve(context.Background(), struct {
			io.Reader
			io.Writer
		}{strings.NewReader(`{"type":"invoke","invocationId":"i","command":"` + c.ID + `","input":{}}` + "\n"), &out})
		if err != nil {
			t.Errorf("%s: %v", c.ID, err)
		}
	}
	// the testscript carries a copy of the manifest: keep it identical
	raw, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	ar, err := txtar.ParseFile("../../../testdata/script/example-notes.txtar")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range ar.Files {
		if f.Name == "pkg/rukh-extension.json" {
			found = true
			if string(f.Data) != string(raw) {
				t.Errorf("testdata/script/example-notes.txtar's pkg/rukh-extension.json differs from %s; copy it over", manifestPath)
			}
		}
	}
	if !found {
		t.Error("testdata/script/example-notes.txtar has no pkg/rukh-extension.json")
	}
}
