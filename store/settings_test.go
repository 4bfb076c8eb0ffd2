package store_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

// secretValue is a sensitive value tests search for as bytes; plainValue
// is a value that is not sensitive, which the same searches must find,
// so that a search that cannot find anything does not pass.
const (
	secretValue = `"sk-9f3KqZ-settings-secret-7Hx2"`
	plainValue  = `"https://plain-setting.example/v1"`
)

func mustKey(t testing.TB) *store.SettingsKey {
	t.Helper()
	k, err := store.NewSettingsKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func sealed(k *store.SettingsKey, pkg, endpoint, id, value string) store.SettingRecord {
	return store.SettingRecord{Package: pkg, Endpoint: endpoint, ID: id, Sensitive: true,
		Sealed: k.Seal(pkg, endpoint, id, []byte(value))}
}

func plain(pkg, endpoint, id, value string) store.SettingRecord {
	return store.SettingRecord{Package: pkg, Endpoint: endpoint, ID: id, Value: []byte(value)}
}

func mustPutSettings(t testing.TB, s *store.Store, rs ...store.SettingRecord) {
	t.Helper()
	for _, r := range rs {
		if err := s.PutSetting(r); err != nil {
			t.Fatalf("PutSetting(%s %s %s): %v", r.Package, r.Endpoint, r.ID, err)
		}
	}
}

// scopes renders records as "package/endpoint/id=value" lines, opening
// sealed values with k.
func scopes(t testing.TB, k *store.SettingsKey, rs []store.SettingRecord) string {
	t.Helper()
	var b strings.Builder
	for _, r := range rs {
		v := r.Value
		if r.Sensitive {
			var err error
			if v, err = k.Open(r); err != nil {
				t.Fatalf("Open(%s %s %s): %v", r.Package, r.Endpoint, r.ID, err)
			}
		}
		if r.SetAt.IsZero() {
			t.Errorf("%s %s %s has no SetAt", r.Package, r.Endpoint, r.ID)
		}
		b.WriteString(r.Package + "/" + r.Endpoint + "/" + r.ID + "=" + string(v) + "\n")
	}
	return b.String()
}

func TestSettingsRoundTrip(t *testing.T) {
	s := mustStore(t)
	k := mustKey(t)
	if rs, err := s.Settings(""); err != nil || len(rs) != 0 {
		t.Fatalf("before any store: %v, %v", rs, err)
	}
	mustPutSettings(t, s,
		plain("acme.notes", "", "url", plainValue),
		sealed(k, "acme.notes", "", "apiKey", secretValue),
		sealed(k, "acme.notes", "tenant-b", "apiKey", `"b-key"`),
		plain("acme.notes", "tenant-a", "region", `"eu"`),
		plain("acme.notes", "", "html", `"<a&b>"`), // kept byte for byte, not escaped
		plain("acme.notes", "", "limits", `[1,2.50,"x"]`),
		plain("acme", "", "url", `"other package, a prefix of the name"`),
		plain("acme.notes-x", "", "url", `"other package, the name a prefix of it"`),
	)
	// a put replaces, ignoring the id's case
	mustPutSettings(t, s, plain("acme.notes", "", "URL", `"https://new.example"`))

	tests := []struct {
		name string
		get  func() ([]store.SettingRecord, error)
		want string
	}{
		{"all", func() ([]store.SettingRecord, error) { return s.Settings("") }, "" +
			"acme//url=\"other package, a prefix of the name\"\n" +
			"acme.notes//URL=\"https://new.example\"\n" +
			"acme.notes//apiKey=" + secretValue + "\n" +
			"acme.notes//html=\"<a&b>\"\n" +
			"acme.notes//limits=[1,2.50,\"x\"]\n" +
			"acme.notes/tenant-a/region=\"eu\"\n" +
			"acme.notes/tenant-b/apiKey=\"b-key\"\n" +
			"acme.notes-x//url=\"other package, the name a prefix of it\"\n"},
		{"one package", func() ([]store.SettingRecord, error) { return s.Settings("acme") }, "" +
			"acme//url=\"other package, a prefix of the name\"\n"},
		{"package scope only", func() ([]store.SettingRecord, error) { return s.SettingsOf("acme.notes", "") }, "" +
			"acme.notes//URL=\"https://new.example\"\n" +
			"acme.notes//apiKey=" + secretValue + "\n" +
			"acme.notes//html=\"<a&b>\"\n" +
			"acme.notes//limits=[1,2.50,\"x\"]\n"},
		{"package then endpoint", func() ([]store.SettingRecord, error) { return s.SettingsOf("acme.notes", "tenant-b") }, "" +
			"acme.notes//URL=\"https://new.example\"\n" +
			"acme.notes//apiKey=" + secretValue + "\n" +
			"acme.notes//html=\"<a&b>\"\n" +
			"acme.notes//limits=[1,2.50,\"x\"]\n" +
			"acme.notes/tenant-b/apiKey=\"b-key\"\n"},
		{"unknown endpoint", func() ([]store.SettingRecord, error) { return s.SettingsOf("acme", "tenant-z") }, "" +
			"acme//url=\"other package, a prefix of the name\"\n"},
		{"unknown package", func() ([]store.SettingRecord, error) { return s.Settings("zz") }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, err := tt.get()
			if err != nil {
				t.Fatal(err)
			}
			if got := scopes(t, k, rs); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}

	t.Run("delete", func(t *testing.T) {
		for _, d := range []struct {
			pkg, endpoint, id string
			want              bool
		}{
			{"acme.notes", "tenant-a", "REGION", true}, // ignoring case
			{"acme.notes", "tenant-a", "region", false},
			{"acme.notes", "", "apiKey", true},
			{"acme.notes", "tenant-a", "apiKey", false}, // another scope's
			{"zz", "", "x", false},
		} {
			if got, err := s.DeleteSetting(d.pkg, d.endpoint, d.id); err != nil || got != d.want {
				t.Errorf("DeleteSetting(%s, %q, %s) = %v, %v; want %v", d.pkg, d.endpoint, d.id, got, err, d.want)
			}
		}
		rs, err := s.SettingsOf("acme.notes", "tenant-b")
		if err != nil {
			t.Fatal(err)
		}
		want := "acme.notes//URL=\"https://new.example\"\n" +
			"acme.notes//html=\"<a&b>\"\n" +
			"acme.notes//limits=[1,2.50,\"x\"]\n" +
			"acme.notes/tenant-b/apiKey=\"b-key\"\n"
		if got := scopes(t, k, rs); got != want {
			t.Errorf("after the deletes:\n%s\nwant\n%s", got, want)
		}
	})

	t.Run("SetAt", func(t *testing.T) {
		at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
		r := plain("acme.site", "", "x", "1")
		r.SetAt = at
		mustPutSettings(t, s, r)
		rs, err := s.Settings("acme.site")
		if err != nil || len(rs) != 1 || !rs[0].SetAt.Equal(at) {
			t.Errorf("SetAt not kept: %v, %v", rs, err)
		}
	})
}

func TestDeleteSettingWithoutStoreCreatesNothing(t *testing.T) {
	s := store.New(filepath.Join(t.TempDir(), "home"))
	if existed, err := s.DeleteSetting("acme", "", "x"); err != nil || existed {
		t.Fatalf("= %v, %v", existed, err)
	}
	if ok, _ := s.Exists(); ok {
		t.Error("DeleteSetting created the store")
	}
}

func TestPutSettingRefuses(t *testing.T) {
	k := mustKey(t)
	long := strings.Repeat("a", 65)
	tests := []struct {
		name string
		r    store.SettingRecord
		msg  string
	}{
		{"no package", plain("", "", "x", "1"), `invalid package name ""`},
		{"bad package", plain("Acme", "", "x", "1"), `invalid package name "Acme"`},
		{"package with a NUL", plain("acme\x00x", "", "x", "1"), "invalid package name"},
		{"long package", plain(long, "", "x", "1"), "invalid package name"},
		{"bad endpoint", plain("acme", "Tenant", "x", "1"), `invalid endpoint name "Tenant"`},
		{"endpoint with a NUL", plain("acme", "a\x00b", "x", "1"), "invalid endpoint name"},
		{"no id", plain("acme", "", "", "1"), `invalid setting id ""`},
		{"id starts with a digit", plain("acme", "", "1x", "1"), `invalid setting id "1x"`},
		{"id with a NUL", plain("acme", "", "a\x00b", "1"), "invalid setting id"},
		{"long id", plain("acme", "", long, "1"), "invalid setting id"},
		{"no value", plain("acme", "", "x", ""), "holds no value"},
		{"value not JSON", plain("acme", "", "x", "{"), "its value is not JSON"},
		{"value too large", plain("acme", "", "x", `"`+strings.Repeat("a", 16<<10)+`"`), "over the limit"},
		{"sensitive in the clear", store.SettingRecord{Package: "acme", ID: "x", Sensitive: true, Value: []byte(secretValue)}, "holds a value in the clear"},
		{"sensitive not sealed", store.SettingRecord{Package: "acme", ID: "x", Sensitive: true}, "holds no sealed value"},
		{"sealed but not sensitive", store.SettingRecord{Package: "acme", ID: "x", Sealed: k.Seal("acme", "", "x", []byte("1"))}, "not sensitive but holds a sealed value"},
		{"sealed too short", store.SettingRecord{Package: "acme", ID: "x", Sensitive: true, Sealed: []byte{1, 2, 3}}, "too few"},
		{"sealed of another version", func() store.SettingRecord {
			r := sealed(k, "acme", "", "x", "1")
			r.Sealed[0] = 2
			return r
		}(), "version 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustStore(t)
			wantCode(t, s.PutSetting(tt.r), kernel.CodeInvalid, tt.msg)
			if rs, err := s.Settings(""); err != nil || len(rs) != 0 {
				t.Errorf("the refused record was stored: %v, %v", rs, err)
			}
		})
	}
	s := mustStore(t)
	for _, read := range []func() error{
		func() error { _, err := s.Settings("Bad"); return err },
		func() error { _, err := s.SettingsOf("acme", "Bad"); return err },
		func() error { _, err := s.DeleteSetting("acme", "", "1x"); return err },
	} {
		wantCode(t, read(), kernel.CodeInvalid, "invalid")
	}
}

func TestSettingsKeyOpen(t *testing.T) {
	k, other := mustKey(t), mustKey(t)
	good := sealed(k, "acme.notes", "tenant-a", "apiKey", secretValue)
	flip := func(i int) store.SettingRecord {
		r := good
		r.Sealed = bytes.Clone(good.Sealed)
		if i < 0 {
			i += len(r.Sealed)
		}
		r.Sealed[i] ^= 0x01
		return r
	}
	moved := func(f func(r *store.SettingRecord)) store.SettingRecord {
		r := good
		f(&r)
		return r
	}
	tests := []struct {
		name string
		key  *store.SettingsKey
		r    store.SettingRecord
		code kernel.Code
		msg  []string
	}{
		{"the key it was sealed with", k, good, "", nil},
		{"another key", other, good, kernel.CodeDenied, []string{"sealed with settings key " + k.ID(), "this rukh's settings key " + other.ID()}},
		{"moved to another id", k, moved(func(r *store.SettingRecord) { r.ID = "otherKey" }), kernel.CodeInternal, []string{"does not open", `"otherKey"`}},
		{"moved to another endpoint", k, moved(func(r *store.SettingRecord) { r.Endpoint = "tenant-b" }), kernel.CodeInternal, []string{"does not open"}},
		{"moved to the package's scope", k, moved(func(r *store.SettingRecord) { r.Endpoint = "" }), kernel.CodeInternal, []string{"does not open"}},
		{"moved to another package", k, moved(func(r *store.SettingRecord) { r.Package = "acme.site" }), kernel.CodeInternal, []string{"does not open"}},
		{"a ciphertext byte damaged", k, flip(sealedHeaderLen + 2), kernel.CodeInternal, []string{"does not open"}},
		{"a tag byte damaged", k, flip(-1), kernel.CodeInternal, []string{"does not open"}},
		{"a nonce byte damaged", k, flip(10), kernel.CodeInternal, []string{"does not open"}},
		{"the key id damaged", k, flip(1), kernel.CodeDenied, []string{"sealed with settings key"}},
		{"the version damaged", k, flip(0), kernel.CodeInternal, []string{"is damaged", "version 0"}},
		{"truncated", k, moved(func(r *store.SettingRecord) { r.Sealed = r.Sealed[:20] }), kernel.CodeInternal, []string{"is damaged", "too few"}},
		{"not sensitive", k, plain("acme", "", "x", "1"), kernel.CodeInternal, []string{"no sealed value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.key.Open(tt.r)
			if tt.code == "" {
				if err != nil || string(got) != secretValue {
					t.Fatalf("= %q, %v", got, err)
				}
				return
			}
			wantCode(t, err, tt.code, "")
			for _, m := range tt.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not say %q", err, m)
				}
			}
			if kernel.ErrorHint(err) == "" && tt.name != "not sensitive" {
				t.Errorf("no hint: %v", err)
			}
			if got != nil || strings.Contains(err.Error(), secretValue) {
				t.Errorf("the refusal gave away the value: %q, %v", got, err)
			}
		})
	}
	// two seals of one value differ (a fresh nonce each)
	if again := k.Seal(good.Package, good.Endpoint, good.ID, []byte(secretValue)); bytes.Equal(again, good.Sealed) {
		t.Error("sealing twice gave the same bytes")
	}
}

// sealedHeaderLen is version, key id and nonce.
const sealedHeaderLen = 1 + 8 + 24

func TestParseSettingsKey(t *testing.T) {
	k := mustKey(t)
	text := string(k.Text())
	raw := strings.TrimPrefix(strings.TrimSuffix(text, "\n"), "rukh-settings-key-1:")
	b64 := func(n int) string { return base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{7}, n)) }
	tests := []struct {
		name, text string
		code       kernel.Code
		msg        string
	}{
		{"as written", text, "", ""},
		{"no newline", strings.TrimSuffix(text, "\n"), "", ""},
		{"CRLF and spaces", "  " + strings.TrimSuffix(text, "\n") + " \r\n", "", ""},
		{"empty", "", kernel.CodeInvalid, "it is empty"},
		{"blank", " \n\n", kernel.CodeInvalid, "it is empty"},
		{"two lines", text + text, kernel.CodeInvalid, "more than one line"},
		{"no prefix", raw, kernel.CodeInvalid, "does not start with rukh-settings-key-1:"},
		{"an age key", "AGE-SECRET-KEY-1" + raw, kernel.CodeInvalid, "does not start with"},
		{"a newer version", "rukh-settings-key-2:" + raw, kernel.CodeUnsupported, `version "2"`},
		{"padded", text[:len(text)-1] + "=", kernel.CodeInvalid, "not unpadded base64url"},
		{"standard base64", "rukh-settings-key-1:" + strings.Repeat("+", 43), kernel.CodeInvalid, "not unpadded base64url"},
		{"nothing after the prefix", "rukh-settings-key-1:", kernel.CodeInvalid, "holds 0 bytes, not 32"},
		{"short", "rukh-settings-key-1:" + b64(16), kernel.CodeInvalid, "holds 16 bytes, not 32"},
		{"long", "rukh-settings-key-1:" + b64(33), kernel.CodeInvalid, "holds 33 bytes, not 32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := store.ParseSettingsKey([]byte(tt.text))
			if tt.code == "" {
				if err != nil || got.ID() != k.ID() || string(got.Text()) != text {
					t.Fatalf("= %v, %v; want %s", got, err, k)
				}
				return
			}
			wantCode(t, err, tt.code, tt.msg)
			if raw != "" && strings.Contains(err.Error()+kernel.ErrorHint(err), raw[:16]) {
				t.Errorf("the error quotes the key: %v", err)
			}
		})
	}
	// printing a key shows its id, never the key
	for _, f := range []string{"%v", "%s", "%#v", "%+v"} {
		if out := fmt.Sprintf(f, k); strings.Contains(out, raw[:16]) || !strings.Contains(out, k.ID()) {
			t.Errorf("%s of a key prints %q", f, out)
		}
	}
	if len(k.ID()) != 16 || k.ID() == mustKey(t).ID() {
		t.Errorf("key ids %s", k.ID())
	}
}

// TestSealedValueNotAtRest looks for a sensitive value, as bytes, in its
// stored record, in the store file and in a copy of the store; the value
// that is not sensitive must be found in each, or the search proves
// nothing.
func TestSealedValueNotAtRest(t *testing.T) {
	s := mustStore(t)
	k := mustKey(t)
	mustPutSettings(t, s,
		sealed(k, "acme.notes", "", "apiKey", secretValue),
		sealed(k, "acme.notes", "tenant-a", "apiKey", secretValue),
		plain("acme.notes", "", "url", plainValue))
	secret, control := []byte(strings.Trim(secretValue, `"`)), []byte(strings.Trim(plainValue, `"`))
	keyText := bytes.TrimSpace(k.Text())
	search := func(t *testing.T, where string, b []byte) {
		t.Helper()
		if bytes.Contains(b, secret) {
			t.Errorf("%s holds the sensitive value", where)
		}
		if bytes.Contains(b, keyText) {
			t.Errorf("%s holds the settings key", where)
		}
		if !bytes.Contains(b, control) {
			t.Errorf("%s lacks the value that is not sensitive: the search proves nothing", where)
		}
	}
	var records []byte
	for _, key := range []string{"acme.notes\x00\x00apiKey", "acme.notes\x00tenant-a\x00apiKey", "acme.notes\x00\x00url"} {
		v, err := store.PeekForTest(s, "settings", key)
		if err != nil || len(v) == 0 {
			t.Fatalf("raw record %q: %q, %v", key, v, err)
		}
		records = append(records, v...)
	}
	search(t, "the raw records", records)
	if !s.Shared() {
		search(t, store.DBName, readFile(t, s.Path()))
	}

	dst := store.New(filepath.Join(t.TempDir(), "copy"))
	if _, err := s.CopyTo(dst); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VerifyCopy(dst); err != nil {
		t.Fatal(err)
	}
	search(t, "the copy's "+store.DBName, readFile(t, dst.Path()))
	if err := dst.Check(); err != nil {
		t.Fatal(err)
	}
	rs, err := dst.SettingsOf("acme.notes", "tenant-a")
	if err != nil {
		t.Fatal(err)
	}
	want := "acme.notes//apiKey=" + secretValue + "\nacme.notes//url=" + plainValue + "\nacme.notes/tenant-a/apiKey=" + secretValue + "\n"
	if got := scopes(t, k, rs); got != want {
		t.Errorf("the copy opens to\n%s\nwant\n%s", got, want)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCheckFindsBrokenSettings breaks one settings record at a time
// behind the store's back and expects Check to name what is wrong.
func TestCheckFindsBrokenSettings(t *testing.T) {
	k := mustKey(t)
	const key = "acme\x00\x00apiKey"
	rec := func(fields string) []byte {
		return []byte(`{"package":"acme","id":"apiKey","setAt":"2030-01-02T03:04:05Z",` + fields + `}`)
	}
	goodSealed := base64.StdEncoding.EncodeToString(k.Seal("acme", "", "apiKey", []byte(secretValue)))
	tests := []struct {
		name, key string
		value     []byte
		msg       string
	}{
		{"not JSON", key, []byte("{"), "does not decode"},
		{"under another key", "acme\x00\x00other", rec(`"value":"1"`), `setting key "acme\x00\x00other"`},
		{"under another endpoint", "acme\x00e\x00apiKey", rec(`"value":"1"`), "holds setting"},
		{"bad package", "ACME\x00\x00apiKey", []byte(`{"package":"ACME","id":"apiKey","setAt":"2030-01-02T03:04:05Z","value":"1"}`), `invalid package name "ACME"`},
		{"no value", key, rec(`"sensitive":false`), "holds no value"},
		{"sensitive in the clear", key, rec(`"sensitive":true,"value":` + secretValue), "holds a value in the clear"},
		{"sensitive, nothing sealed", key, rec(`"sensitive":true`), "holds no sealed value"},
		{"sealed but not sensitive", key, rec(`"sealed":"` + goodSealed + `"`), "not sensitive but holds a sealed value"},
		{"sealed bytes cut short", key, rec(`"sensitive":true,"sealed":"` + goodSealed[:20] + `"`), "too few"},
		{"no time", key, []byte(`{"package":"acme","id":"apiKey","value":"1"}`), "no time it was set"},
		{"twice ignoring case", "acme\x00\x00APIKEY", []byte(`{"package":"acme","id":"APIKEY","setAt":"2030-01-02T03:04:05Z","value":"1"}`), "stored twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t)
			mustPutSettings(t, s, sealed(k, "acme", "", "apiKey", secretValue), plain("acme", "e", "url", plainValue))
			if err := s.Check(); err != nil {
				t.Fatalf("healthy store: %v", err)
			}
			if err := store.PokeForTest(s, "settings", tt.key, tt.value); err != nil {
				t.Fatal(err)
			}
			wantCode(t, s.Check(), kernel.CodeInternal, tt.msg)
		})
	}
}

// A home written before settings came has no settings bucket: it reads as
// having none, passes Check, and gets the bucket on its next write.
func TestOldHomeGetsSettings(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, store.DBName), readFile(t, filepath.Join("testdata", "v1-home", store.DBName)), 0o600); err != nil {
		t.Fatal(err)
	}
	s := store.New(home)
	if n, err := store.CountForTest(s, "meta"); err != nil || n == 0 {
		t.Fatalf("the old home does not read: %d, %v", n, err)
	}
	if err := s.Check(); err != nil {
		t.Fatalf("the old home: %v", err)
	}
	if rs, err := s.Settings(""); err != nil || len(rs) != 0 {
		t.Fatalf("Settings = %v, %v", rs, err)
	}
	if existed, err := s.DeleteSetting("acme", "", "x"); err != nil || existed {
		t.Fatalf("DeleteSetting = %v, %v", existed, err)
	}
	mustPutSettings(t, s, plain("acme", "", "x", "1"))
	if rs, err := s.Settings("acme"); err != nil || len(rs) != 1 {
		t.Fatalf("after a put: %v, %v", rs, err)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}
