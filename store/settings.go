package store

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
)

// Settings are the owner's values of the settings an extension's package
// declares (docs/settings.md): one record per package, scope and id, where
// the scope is the package itself (every endpoint) or one endpoint, whose
// value wins over the package's. A sensitive value is stored only sealed
// (settingskey.go); the store never holds the key, so it never opens one.
// The store knows nothing of declarations: which ids exist, their types
// and which are sensitive are the caller's business.
var bucketSettings = []byte("settings") // package 0x00 endpoint 0x00 id → settingRec JSON

// maxSettingValue bounds one value, canonical JSON (the kernel checks the
// same bound against the declaration).
const maxSettingValue = kernel.MaxSettingValueBytes

// SettingRecord is one stored value of one setting.
type SettingRecord struct {
	Package, Endpoint, ID string // Endpoint "" is the package's own value, for every endpoint
	Sensitive             bool
	SetAt                 time.Time
	Value                 []byte // canonical JSON of a value that is not sensitive
	Sealed                []byte // a sensitive value, sealed by a SettingsKey; the store never opens it
}

// what names the record's setting in messages.
func (r *SettingRecord) what() string {
	s := fmt.Sprintf("setting %q of package %s", r.ID, r.Package)
	if r.Endpoint != "" {
		s += " for endpoint " + r.Endpoint
	}
	return s
}

type settingRec struct {
	Package   string         `json:"package"`
	Endpoint  string         `json:"endpoint,omitempty"`
	ID        string         `json:"id"`
	Sensitive bool           `json:"sensitive,omitempty"`
	SetAt     time.Time      `json:"setAt"`
	Value     jsontext.Value `json:"value,omitempty"`
	Sealed    []byte         `json:"sealed,omitempty"` // base64
}

func settingKey(pkg, endpoint, id string) []byte {
	return []byte(pkg + "\x00" + endpoint + "\x00" + id)
}

// scopePrefix is the key prefix of one package's records in one scope.
func scopePrefix(pkg, endpoint string) []byte { return []byte(pkg + "\x00" + endpoint + "\x00") }

// validPackageName reports whether name is [a-z0-9][a-z0-9.-]{0,63}, the
// manifest's package names.
func validPackageName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case (c == '.' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// validSettingID reports whether id is [a-zA-Z][a-zA-Z0-9_-]{0,63}, the
// manifest's setting ids.
func validSettingID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case ('0' <= c && c <= '9' || c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// namesProblem says what is wrong with a package name, a scope and, when
// needID, a setting id; "" when nothing is. Endpoint names have the agents'
// grammar.
func namesProblem(pkg, endpoint, id string, needPkg, needID bool) string {
	switch {
	case (needPkg || pkg != "") && !validPackageName(pkg):
		return fmt.Sprintf("invalid package name %q: want [a-z0-9][a-z0-9.-]{0,63}", pkg)
	case endpoint != "" && !validAgentName(endpoint):
		return fmt.Sprintf("invalid endpoint name %q: want [a-z0-9][a-z0-9-]{0,63}", endpoint)
	case needID && !validSettingID(id):
		return fmt.Sprintf("invalid setting id %q: want [a-zA-Z][a-zA-Z0-9_-]{0,63}", id)
	}
	return ""
}

// CheckSettingNames checks a package name, an endpoint name ("" is the
// package's own scope) and a setting id as PutSetting does, so that a
// caller can refuse them before it does anything else; an empty package
// name or id is not checked.
func CheckSettingNames(pkg, endpoint, id string) error {
	if p := namesProblem(pkg, endpoint, id, false, id != ""); p != "" {
		return kernel.Errorf(kernel.CodeInvalid, "%s", p)
	}
	return nil
}

func checkNames(pkg, endpoint, id string, needID bool) error {
	if p := namesProblem(pkg, endpoint, id, true, needID); p != "" {
		return kernel.Errorf(kernel.CodeInvalid, "%s", p)
	}
	return nil
}

// problem says what is wrong with a record, "" when nothing is: what
// PutSetting refuses and Check reports.
func (r *SettingRecord) problem() string {
	if p := namesProblem(r.Package, r.Endpoint, r.ID, true, true); p != "" {
		return p
	}
	if r.Sensitive {
		switch {
		case len(r.Value) != 0:
			return "it is sensitive but holds a value in the clear"
		case len(r.Sealed) == 0:
			return "it is sensitive but holds no sealed value"
		}
		return sealedProblem(r.Sealed)
	}
	switch {
	case len(r.Sealed) != 0:
		return "it is not sensitive but holds a sealed value"
	case len(r.Value) == 0:
		return "it holds no value"
	case len(r.Value) > maxSettingValue:
		return fmt.Sprintf("its value has %d bytes, over the limit of %d", len(r.Value), maxSettingValue)
	case !jsontext.Value(r.Value).IsValid():
		return "its value is not JSON"
	}
	return ""
}

func (r *SettingRecord) rec() settingRec {
	return settingRec{Package: r.Package, Endpoint: r.Endpoint, ID: r.ID, Sensitive: r.Sensitive,
		SetAt: r.SetAt, Value: bytes.Clone(r.Value), Sealed: bytes.Clone(r.Sealed)}
}

func (rec *settingRec) record() SettingRecord {
	return SettingRecord{Package: rec.Package, Endpoint: rec.Endpoint, ID: rec.ID, Sensitive: rec.Sensitive,
		SetAt: rec.SetAt, Value: []byte(rec.Value), Sealed: rec.Sealed}
}

func encodeSetting(rec settingRec) ([]byte, error) {
	b, err := jsonv2.Marshal(rec)
	if err != nil {
		return nil, kernel.Errorf(kernel.CodeInternal, "cannot encode the setting %q of package %s", rec.ID, rec.Package).Wrap(err)
	}
	return b, nil
}

func decodeSetting(raw []byte) (settingRec, error) {
	var rec settingRec
	err := jsonv2.Unmarshal(raw, &rec)
	return rec, err
}

// PutSetting stores r in one transaction, replacing the value of the same
// setting in the same scope; setting ids are compared ignoring case, as
// manifests declare them. A zero SetAt is now.
func (s *Store) PutSetting(r SettingRecord) error {
	if p := r.problem(); p != "" {
		return kernel.Errorf(kernel.CodeInvalid, "%s", "cannot store "+r.what()+": "+p)
	}
	if r.SetAt.IsZero() {
		r.SetAt = clock().UTC()
	}
	v, err := encodeSetting(r.rec())
	if err != nil {
		return err
	}
	return s.update(func(tx txn) error {
		b := tx.Bucket(bucketSettings)
		if _, err := deleteSettingIgnoringCase(b, r.Package, r.Endpoint, r.ID); err != nil {
			return err
		}
		return b.Put(settingKey(r.Package, r.Endpoint, r.ID), v)
	})
}

// deleteSettingIgnoringCase deletes the records of pkg's scope whose id is
// id ignoring case.
func deleteSettingIgnoringCase(b bucket, pkg, endpoint, id string) (bool, error) {
	prefix := scopePrefix(pkg, endpoint)
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if strings.EqualFold(string(k[len(prefix):]), id) {
			keys = append(keys, bytes.Clone(k))
		}
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return false, err
		}
	}
	return len(keys) > 0, nil
}

// DeleteSetting removes the value of setting id (ignoring case) of pkg in
// one scope (endpoint "" is the package's own value) and reports whether
// there was one.
func (s *Store) DeleteSetting(pkg, endpoint, id string) (existed bool, err error) {
	if err := checkNames(pkg, endpoint, id, true); err != nil {
		return false, err
	}
	if ok, err := s.Exists(); err != nil || !ok {
		return false, err
	}
	err = s.update(func(tx txn) error {
		var err error
		existed, err = deleteSettingIgnoringCase(tx.Bucket(bucketSettings), pkg, endpoint, id)
		return err
	})
	return existed, err
}

// Settings returns the stored values of pkg's settings, in every scope, or
// of every package when pkg is "", ordered by key: by package, the
// package's own values first, then each endpoint's by name.
func (s *Store) Settings(pkg string) ([]SettingRecord, error) {
	var prefix []byte
	if pkg != "" {
		if err := checkNames(pkg, "", "", false); err != nil {
			return nil, err
		}
		prefix = []byte(pkg + "\x00")
	}
	return s.settingsUnder(prefix)
}

// SettingsOf returns what a call on endpoint sees of pkg's stored values:
// the package's own, then that endpoint's (none for endpoint "").
func (s *Store) SettingsOf(pkg, endpoint string) ([]SettingRecord, error) {
	if err := checkNames(pkg, endpoint, "", false); err != nil {
		return nil, err
	}
	prefixes := [][]byte{scopePrefix(pkg, "")}
	if endpoint != "" {
		prefixes = append(prefixes, scopePrefix(pkg, endpoint))
	}
	return s.settingsUnder(prefixes...)
}

// settingsUnder reads the records under each prefix, in one view.
func (s *Store) settingsUnder(prefixes ...[]byte) ([]SettingRecord, error) {
	var out []SettingRecord
	_, err := s.view(func(tx txn) error {
		out = nil
		b := tx.Bucket(bucketSettings)
		if b == nil { // a home no write has touched since settings came
			return nil
		}
		for _, prefix := range prefixes {
			c := b.Cursor()
			for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
				rec, err := decodeSetting(v)
				if err != nil {
					return s.internal("cannot decode the setting "+strconv.Quote(string(k)), err)
				}
				out = append(out, rec.record())
			}
		}
		return nil
	})
	return out, err
}

// checkSettings checks that each record is well formed, is stored under
// its own key, and that no scope holds one id twice ignoring case.
func (s *Store) checkSettings(tx txn) error {
	b := tx.Bucket(bucketSettings)
	if b == nil {
		return nil
	}
	seen := map[string]string{}
	return b.ForEach(func(k, v []byte) error {
		rec, err := decodeSetting(v)
		if err != nil {
			return s.broken("setting %s does not decode: %v", strconv.Quote(string(k)), err)
		}
		r := rec.record()
		if !bytes.Equal(k, settingKey(r.Package, r.Endpoint, r.ID)) {
			return s.broken("setting key %s holds %s", strconv.Quote(string(k)), r.what())
		}
		if p := r.problem(); p != "" {
			return s.broken("%s: %s", r.what(), p)
		}
		if r.SetAt.IsZero() {
			return s.broken("%s has no time it was set", r.what())
		}
		folded := string(scopePrefix(r.Package, r.Endpoint)) + strings.ToLower(r.ID)
		if other, dup := seen[folded]; dup {
			return s.broken("%s is stored twice, as %q and %q", r.what(), other, r.ID)
		}
		seen[folded] = r.ID
		return nil
	})
}
