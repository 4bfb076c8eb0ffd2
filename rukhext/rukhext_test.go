package rukhext_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/rukhext"
)

const extArg = "rukhext-test-extension"

func TestMain(m *testing.M) {
	if len(os.Args) >= 2 && os.Args[1] == extArg {
		notes().Main() // exits
	}
	os.Exit(m.Run())
}

// notes is the test extension, run through the kernel's Runner by
// re-executing this test binary.
func notes() *rukhext.Extension {
	ext := rukhext.New()
	ext.Handle("notes.add", func(ctx context.Context, call *rukhext.Call) (rukhext.Result, error) {
		return rukhext.Structured(map[string]any{
			"id":       call.Int("priority") * 10,
			"title":    call.String("title"),
			"tags":     call.Strings("tags"),
			"amount":   call.Decimal("amount"),
			"ratio":    call.Float("ratio"),
			"force":    call.Bool("force"),
			"hasBody":  call.Has("body"),
			"explicit": call.Explicit("priority"),
			"list":     fmt.Sprintf("%#v", call.List("mixed")),
		}), nil
	})
	ext.Handle("notes.show", func(ctx context.Context, call *rukhext.Call) (rukhext.Result, error) {
		call.Progress("loading", 1, 2)
		call.Progress("rendering", 2, 2)
		return rukhext.Text("note: " + call.String("title")), nil
	})
	ext.Handle("notes.error", func(ctx context.Context, call *rukhext.Call) (rukhext.Result, error) {
		return rukhext.Result{}, errors.New("note \"x\" not found")
	})
	ext.Handle("notes.partial", func(ctx context.Context, call *rukhext.Call) (rukhext.Result, error) {
		r := rukhext.Text("2 of 3 saved")
		return rukhext.Failed("disk full", &r), nil
	})
	ext.Handle("notes.wait", func(ctx context.Context, call *rukhext.Call) (rukhext.Result, error) {
		<-ctx.Done()
		fmt.Fprintln(os.Stderr, "cause:", context.Cause(ctx))
		return rukhext.Failed(context.Cause(ctx).Error(), nil), nil
	})
	ext.Handle("notes.whoami", func(ctx context.Context, call *rukhext.Call) (rukhext.Result, error) {
		c := call.Caller()
		return rukhext.Text(strings.Join([]string{c.Transport, c.Endpoint, c.Subject, c.Agent, c.Credential, c.Issuer}, "|")), nil
	})
	ext.Handle("notes.config", func(ctx context.Context, call *rukhext.Call) (rukhext.Result, error) {
		st := call.Settings()
		return rukhext.Text(fmt.Sprintf("%d|%q|%v|%d|%v|%q|%q|%#v|%v|%q",
			len(st), st.String("apiKey"), st.Bool("verbose"), st.Int("retries"), st.Float("ratio"),
			st.Decimal("limit"), st.Strings("regions"), st.List("mixed"), st.Has("absent"), string(st.Raw("retries")))), nil
	})
	ext.Handle("notes.term", func(ctx context.Context, call *rukhext.Call) (rukhext.Result, error) {
		call.Progress(strconv.Itoa(os.Getpid()), 0, 0)
		<-ctx.Done()
		return rukhext.Failed("stopped: "+context.Cause(ctx).Error(), nil), nil
	})
	return ext
}

var addSchema = jsontext.Value(`{"type":"object","properties":{
	"id":{"type":"integer"},"title":{"type":"string"},
	"tags":{"type":"array","items":{"type":"string"},"maxItems":16},
	"amount":{"type":"string"},"ratio":{"type":"number"},"force":{"type":"boolean"},
	"hasBody":{"type":"boolean"},"explicit":{"type":"boolean"},"list":{"type":"string"}},
	"required":["id"],"additionalProperties":false}`)

func invocation(t *testing.T, command string, decl *kernel.ResultDecl, input map[string]any, explicit ...string) *kernel.Invocation {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &kernel.Invocation{
		ID: kernel.NewInvocationID(),
		Command: &kernel.Command{ID: command, Execute: kernel.Execute{
			Program: filepath.Base(exe), Args: []string{extArg}, Result: decl,
		}},
		Dir:     filepath.Dir(exe),
		Request: kernel.Request{Command: command, Input: input, Explicit: explicit},
		Limits:  kernel.Limits{Timeout: 10 * time.Second},
	}
}

func TestEndToEnd(t *testing.T) {
	t.Parallel()
	text := &kernel.ResultDecl{Kind: kernel.ResultText}
	tests := []struct {
		name    string
		inv     *kernel.Invocation
		outcome kernel.Outcome
		reason  string
		result  string
	}{
		{"structured accessors", invocation(t, "notes.add", &kernel.ResultDecl{Kind: kernel.ResultStructured, Schema: addSchema}, map[string]any{
			"title": "milk \"2%\"", "priority": int64(3), "tags": []any{"a", "b"}, "amount": kernel.Decimal("1.50"),
			"ratio": 0.5, "force": true, "mixed": []any{int64(1), 2.5, "x", false},
		}, "title"), kernel.Succeeded, "",
			`{"kind":"structured","data":{"amount":"1.50","explicit":false,"force":true,"hasBody":false,"id":30,"list":"[]interface {}{1, 2.5, \"x\", false}","ratio":0.5,"tags":["a","b"],"title":"milk \"2%\""}}`},
		{"text", invocation(t, "notes.show", text, map[string]any{"title": "milk"}), kernel.Succeeded, "", `{"kind":"text","text":"note: milk"}`},
		{"error is command_failed", invocation(t, "notes.error", text, nil), kernel.CommandFailed, `note "x" not found`, ""},
		{"failed with result", invocation(t, "notes.partial", text, nil), kernel.CommandFailed, "disk full", `{"kind":"text","text":"2 of 3 saved"}`},
		{"unknown command", invocation(t, "notes.nope", text, nil), kernel.ExecutionFailed, "exited with status 2 without a report", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var progress []string
			tt.inv.OnProgress = func(p kernel.Progress) { progress = append(progress, p.Message) }
			diag := kernel.NewDiagnostics(4096)
			tt.inv.Stderr = diag
			res := kernel.NewRunner().Invoke(context.Background(), tt.inv)
			if res.Outcome != tt.outcome || !strings.Contains(res.Reason, tt.reason) {
				t.Fatalf("got %s %q, want %s %q; stderr: %s", res.Outcome, res.Reason, tt.outcome, tt.reason, diag)
			}
			if got := string(res.CommandResult); got != tt.result && !(tt.result != "" && jsonEqual(t, got, tt.result)) {
				t.Errorf("commandResult\n got %s\nwant %s", got, tt.result)
			}
			if tt.inv.Command.ID == "notes.show" && strings.Join(progress, ",") != "loading,rendering" {
				t.Errorf("progress %q", progress)
			}
		})
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	va, vb := jsontext.Value(a), jsontext.Value(b)
	if va.Canonicalize() != nil || vb.Canonicalize() != nil {
		return false
	}
	return string(va) == string(vb)
}

// TestCancelReachesHandler: the handler's ctx ends on the core's cancel
// message, long before SIGTERM would arrive.
func TestCancelReachesHandler(t *testing.T) {
	t.Parallel()
	inv := invocation(t, "notes.wait", &kernel.ResultDecl{Kind: kernel.ResultText}, nil)
	inv.Limits.Timeout = 200 * time.Millisecond
	diag := kernel.NewDiagnostics(4096)
	inv.Stderr = diag
	r := kernel.NewRunner()
	r.TermGrace = 5 * time.Minute
	start := time.Now()
	res := r.Invoke(context.Background(), inv)
	if res.Outcome != kernel.Cancelled || res.Reason != "deadline exceeded" {
		t.Errorf("got %s %q, want cancelled: deadline exceeded", res.Outcome, res.Reason)
	}
	if took := time.Since(start); took > time.Minute {
		t.Errorf("took %v: the handler did not see the cancel message", took)
	}
	if got, want := diag.String(), "cause: cancelled by rukh: deadline exceeded\n"; got != want {
		t.Errorf("stderr %q, want %q", got, want)
	}
}

// TestSIGTERMReachesHandler: SIGTERM alone (no cancel message) ends the
// handler's ctx; the handler's own report then decides the outcome. The
// program reports its pid for the test to signal: without namespaces, so
// that pid is the host's.
func TestSIGTERMReachesHandler(t *testing.T) {
	t.Parallel()
	inv := invocation(t, "notes.term", &kernel.ResultDecl{Kind: kernel.ResultText}, nil)
	inv.OnProgress = func(p kernel.Progress) {
		pid, err := strconv.Atoi(p.Message)
		if err != nil {
			t.Errorf("progress %q", p.Message)
			return
		}
		syscall.Kill(pid, syscall.SIGTERM)
	}
	r := kernel.NewRunner()
	r.NoNamespaces = true
	res := r.Invoke(context.Background(), inv)
	if res.Outcome != kernel.CommandFailed || !strings.HasPrefix(res.Reason, "stopped: ") {
		t.Errorf("got %s %q, want command_failed stopped: …", res.Outcome, res.Reason)
	}
	t.Logf("reason: %s", res.Reason)
}

// TestServe drives Serve in-process over a socket pair, checking the exact
// messages the SDK writes.
func TestServe(t *testing.T) {
	t.Parallel()
	core, ext := net.Pipe()
	defer core.Close()
	done := make(chan int, 1)
	go func() {
		code, _ := notes().Serve(context.Background(), ext)
		ext.Close()
		done <- code
	}()
	fmt.Fprintln(core, `{"type":"invoke","invocationId":"inv_1","command":"notes.show","input":{"title":"x"},"explicit":["title"],"interactive":false,"deadlineMs":1000}`)
	buf := make([]byte, 4096)
	var out []byte
	for {
		n, err := core.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			break
		}
	}
	want := `{"type":"progress","message":"loading","progress":1,"total":2}
{"type":"progress","message":"rendering","progress":2,"total":2}
{"type":"report","invocationId":"inv_1","outcome":"succeeded","commandResult":{"kind":"text","text":"note: x"}}
`
	if string(out) != want {
		t.Errorf("messages\n got %s\nwant %s", out, want)
	}
	if code := <-done; code != rukhext.ExitSucceeded {
		t.Errorf("exit %d", code)
	}
}

// TestCaller: the caller the core puts in the invoke message reaches the
// handler, through the real Runner; an older core that sends none gives
// the zero Caller.
func TestCaller(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		caller kernel.Caller
		want   string
	}{
		{kernel.Caller{Transport: kernel.TransportStdio, Endpoint: "ci", Subject: "ci-bot"}, "stdio|ci|ci-bot|||"},
		{kernel.CLICaller, "cli||owner|||"},
		{kernel.Caller{}, "|||||"},
		{kernel.Credential{Agent: "bot", Endpoint: "remote", Kind: kernel.CredentialOneTime, Hash: kernel.TokenHash{1}}.Caller(kernel.TransportHTTP, "owner"),
			"http|remote|owner|bot|one-time|"},
		{kernel.Anonymous("remote").Caller(kernel.TransportHTTP, "owner"), "http|remote|owner|anonymous||"},
		{kernel.Credential{Agent: "ci-app", Endpoint: "remote", Kind: kernel.CredentialOAuth, Issuer: "https://idp.example", Subject: "svc-7"}.Caller(kernel.TransportHTTP, "owner"),
			"http|remote|svc-7|ci-app|oauth|https://idp.example"},
	} {
		inv := invocation(t, "notes.whoami", &kernel.ResultDecl{Kind: kernel.ResultText}, nil)
		inv.Caller = tt.caller
		res := kernel.NewRunner().Invoke(context.Background(), inv)
		want := `{"kind":"text","text":"` + tt.want + `"}`
		if res.Outcome != kernel.Succeeded || string(res.CommandResult) != want {
			t.Errorf("caller %+v: got %s %q %s, want %s", tt.caller, res.Outcome, res.Reason, res.CommandResult, want)
		}
	}
}

// serveLine runs Serve on one invoke line and returns what it wrote.
func serveLine(t *testing.T, line string) (string, int, error) {
	t.Helper()
	rw := &struct {
		*strings.Reader
		strings.Builder
	}{Reader: strings.NewReader(line + "\n")}
	code, err := notes().Serve(context.Background(), rw)
	return rw.Builder.String(), code, err
}

// TestSettings: the invoke message's settings member reaches the handler
// through Settings() and its typed getters; without the member (a package
// that declares no settings, or an older core) Settings() is empty.
func TestSettings(t *testing.T) {
	t.Parallel()
	const head = `{"type":"invoke","invocationId":"inv_1","command":"notes.config","input":{},"explicit":[],"interactive":false,"deadlineMs":1000,"caller":{"transport":"cli","subject":"owner"}`
	for _, tt := range []struct{ name, settings, want string }{
		{"typed", `,"settings":{"apiKey":"s3cr\u00e9t \"x\"","verbose":true,"retries":9007199254740993,"ratio":0.25,"limit":"1.50","regions":["eu","us"],"mixed":[1,2.5,"x",false]}`,
			`7|"s3crét \"x\""|true|9007199254740993|0.25|"1.50"|["eu" "us"]|[]interface {}{1, 2.5, "x", false}|false|"9007199254740993"`},
		{"empty object", `,"settings":{}`, `0|""|false|0|0|""|[]|[]interface {}(nil)|false|""`},
		{"absent", ``, `0|""|false|0|0|""|[]|[]interface {}(nil)|false|""`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, code, err := serveLine(t, head+tt.settings+"}")
			if err != nil || code != rukhext.ExitSucceeded {
				t.Fatalf("got %d %v", code, err)
			}
			var rep struct {
				CommandResult struct {
					Text string `json:"text"`
				} `json:"commandResult"`
			}
			if err := jsonUnmarshal(out, &rep); err != nil {
				t.Fatalf("report %q: %v", out, err)
			}
			if rep.CommandResult.Text != tt.want {
				t.Errorf("handler saw\n got %s\nwant %s", rep.CommandResult.Text, tt.want)
			}
		})
	}
}

type settingsSource struct {
	values map[string]jsontext.Value
	err    error
}

func (s settingsSource) SettingValues(pkg, endpoint string, ids []string) (map[string]jsontext.Value, error) {
	return s.values, s.err
}

// TestSettingsThroughRunner: what the kernel's Runner resolves (stored
// values, defaults, the typed forms) is exactly what Settings() gives; a
// missing required setting rejects the call before the program runs.
func TestSettingsThroughRunner(t *testing.T) {
	t.Parallel()
	decls := []kernel.Setting{
		{ID: "apiKey", Type: kernel.TypeString, Required: true, Sensitive: true},
		{ID: "verbose", Type: kernel.TypeBoolean, Default: jsontext.Value(`true`)},
		{ID: "retries", Type: kernel.TypeInteger},
		{ID: "limit", Type: kernel.TypeDecimal, Default: jsontext.Value(`"01.50"`)},
		{ID: "regions", Type: kernel.TypeList, Items: &kernel.ItemSpec{Type: kernel.TypeString}},
	}
	for _, tt := range []struct {
		name    string
		src     settingsSource
		outcome kernel.Outcome
		want    string
	}{
		{"stored and defaulted", settingsSource{values: map[string]jsontext.Value{
			"apiKey": jsontext.Value(`"k-1"`), "retries": jsontext.Value(`9007199254740993`), "regions": jsontext.Value(`["eu","us"]`)}},
			kernel.Succeeded, `5|"k-1"|true|9007199254740993|0|"1.5"|["eu" "us"]|[]interface {}(nil)|false|"9007199254740993"`},
		{"missing required", settingsSource{}, kernel.Rejected,
			`setting "apiKey" of package example.notes is not set; run: rukh settings set example.notes apiKey`},
		{"source fails", settingsSource{err: errors.New("example.notes needs the settings key")}, kernel.ExecutionFailed,
			"example.notes needs the settings key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			inv := invocation(t, "notes.config", &kernel.ResultDecl{Kind: kernel.ResultText}, nil)
			inv.Package, inv.Settings = "example.notes", decls
			r := kernel.NewRunner()
			r.Settings = tt.src
			res := r.Invoke(context.Background(), inv)
			if res.Outcome != tt.outcome {
				t.Fatalf("got %s %q, want %s", res.Outcome, res.Reason, tt.outcome)
			}
			if tt.outcome != kernel.Succeeded {
				if res.Reason != tt.want || res.CommandResult != nil {
					t.Errorf("got %q %s, want reason %q and no result", res.Reason, res.CommandResult, tt.want)
				}
				return
			}
			if want := `{"kind":"text","text":` + strconv.Quote(tt.want) + `}`; !jsonEqual(t, string(res.CommandResult), want) {
				t.Errorf("handler saw\n got %s\nwant %s", res.CommandResult, want)
			}
		})
	}
}

// TestSettingsRefused: a settings member that no declared setting could
// produce is refused before the handler runs, naming what is wrong.
func TestSettingsRefused(t *testing.T) {
	t.Parallel()
	const head = `{"type":"invoke","invocationId":"inv_1","command":"notes.config","input":{},"explicit":[],"interactive":false,"deadlineMs":1000,"settings":`
	for _, tt := range []struct{ settings, err string }{
		{`"apiKey"`, "decoding the invoke message: settings is a string, want an object of setting values"},
		{`null`, "settings is null, want an object"},
		{`["a"]`, "settings is a list, want an object"},
		{`{"apiKey":null}`, `setting "apiKey" is null, want a string, boolean, number or list`},
		{`{"apiKey":{"v":"x"}}`, `setting "apiKey" is an object, want a string, boolean, number or list`},
		{`{"regions":["eu",null]}`, `setting "regions": item 1 is null, want a string, boolean or number`},
		{`{"regions":[["eu"]]}`, `setting "regions": item 0 is a list, want a string, boolean or number`},
		{`{"apiKey":"a","apiKey":"b"}`, `duplicate object member name "apiKey"`},
	} {
		t.Run(tt.settings, func(t *testing.T) {
			t.Parallel()
			out, code, err := serveLine(t, head+tt.settings+"}")
			if code != rukhext.ExitProtocolError || err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("got %d %v, want 2 and %q", code, err, tt.err)
			}
			if out != "" {
				t.Errorf("wrote %q: the handler ran", out)
			}
		})
	}
}

func TestServeErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, line, err string }{
		{"not invoke", `{"type":"cancel","reason":"x"}`, `first message is "cancel"`},
		{"bad json", `{"type":`, "decoding the invoke message"},
		{"unknown command", `{"type":"invoke","invocationId":"i","command":"zzz","input":{},"explicit":[],"interactive":false,"deadlineMs":1}`, `no handler for command "zzz"`},
		{"eof", ``, "reading the invoke message"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rw := &struct {
				*strings.Reader
				strings.Builder
			}{Reader: strings.NewReader(tt.line)}
			code, err := notes().Serve(context.Background(), rw)
			if code != rukhext.ExitProtocolError || err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("got %d %v, want 2 and %q", code, err, tt.err)
			}
			if rw.Builder.Len() != 0 {
				t.Errorf("wrote %q without a report to send", rw.Builder.String())
			}
		})
	}
}
