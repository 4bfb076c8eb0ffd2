package kernel

import (
	"errors"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Setting declares one package setting (docs/settings.md): a value the
// owner gives the package, read at call time and delivered on the channel
// only. Its type and constraints are the input grammar's.
type Setting struct {
	ID          string           `json:"id"`
	Type        ParamType        `json:"type"`
	Description string           `json:"description,omitempty"`
	Required    bool             `json:"required,omitempty"`
	Sensitive   bool             `json:"sensitive,omitempty"`
	Default     jsontext.Value   `json:"default,omitempty"`
	Enum        []jsontext.Value `json:"enum,omitempty"`
	Minimum     jsontext.Value   `json:"minimum,omitempty"`
	Maximum     jsontext.Value   `json:"maximum,omitempty"`
	MinLength   *int             `json:"minLength,omitempty"`
	MaxLength   *int             `json:"maxLength,omitempty"`
	MinItems    *int             `json:"minItems,omitempty"`
	MaxItems    *int             `json:"maxItems,omitempty"`
	Items       *ItemSpec        `json:"items,omitempty"`
}

// Settings bounds.
const (
	// MaxSettings bounds the settings one package declares.
	MaxSettings = 32
	// MaxSettingValueBytes bounds one value, as canonical JSON.
	MaxSettingValueBytes = 16 << 10
)

var settingIDRE = pattern{`^[a-zA-Z][a-zA-Z0-9_-]{0,63}$`, run(isLetter, oneOf(isAlnum, "_-"), 63)}

// SettingsSource is what the runner asks, at the start of each call, for
// the owner's stored values of the settings ids the running release
// declares: for a call on an endpoint ("" on the CLI) the endpoint's own
// value of an id over the package's, each the canonical JSON of a typed
// value keyed by its id as given, sensitive values already opened. Ids
// without a stored value are absent. It is asked only for a package that
// declares settings.
type SettingsSource interface {
	SettingValues(pkg, endpoint string, ids []string) (map[string]jsontext.Value, error)
}

// FindSetting returns the declaration of id, or nil.
func FindSetting(decls []Setting, id string) *Setting {
	for i := range decls {
		if decls[i].ID == id {
			return &decls[i]
		}
	}
	return nil
}

// param is the setting as the input grammar sees it, so that one set of
// rules checks both.
func (s *Setting) param() *Param {
	return &Param{
		ID: s.ID, Type: s.Type, Default: s.Default, Enum: s.Enum,
		Minimum: s.Minimum, Maximum: s.Maximum, MinLength: s.MinLength, MaxLength: s.MaxLength,
		MinItems: s.MinItems, MaxItems: s.MaxItems, Items: s.Items,
	}
}

func (s *Setting) spec() (*paramSpec, error) {
	return newParamSpec(s.param(), "/settings/"+s.ID)
}

// ParseValue converts the owner's text to the setting's typed value and
// checks it: a scalar is read as a command-line value of its type, a list
// as a JSON array. It returns the value's canonical JSON.
func (s *Setting) ParseValue(text string) (jsontext.Value, error) {
	spec, err := s.spec()
	if err != nil {
		return nil, err
	}
	var v any
	if spec.lr != nil {
		raw := []byte(strings.TrimSpace(text))
		if err := CheckJSON(raw, JSONLimits{MaxBytes: MaxSettingValueBytes, MaxDepth: 4, MaxMembers: 1 << 12}); err != nil {
			e := s.invalid("is a list: give a JSON array, such as [\"a\",\"b\"]")
			if s.Sensitive {
				return nil, e // the parser's message may quote the secret
			}
			return nil, e.Wrap(err)
		}
		var e *Error
		if v, e = spec.fromJSON(raw, ""); e != nil {
			if s.Sensitive {
				return nil, s.invalid("is a list: give a JSON array of " + string(s.Items.Type) + " items")
			}
			return nil, s.invalid(e.Message)
		}
	} else {
		x, msg := spec.r.fromCLI(text)
		if msg != "" {
			return nil, s.invalid(msg)
		}
		v = x
	}
	return s.finish(spec, v)
}

// CheckValue checks a stored value (canonical JSON) against the
// declaration, which a newer release may have tightened, and returns it in
// canonical form.
func (s *Setting) CheckValue(raw jsontext.Value) (jsontext.Value, error) {
	spec, err := s.spec()
	if err != nil {
		return nil, err
	}
	v, e := spec.fromJSON(raw, "")
	if e != nil {
		return nil, s.invalid(e.Message)
	}
	return s.finish(spec, v)
}

func (s *Setting) finish(spec *paramSpec, v any) (jsontext.Value, error) {
	if e := spec.check(v, ""); e != nil {
		return nil, s.invalid(e.Message)
	}
	b := appendValue(nil, v)
	if len(b) > MaxSettingValueBytes {
		return nil, s.invalid("is " + strconv.Itoa(len(b)) + " bytes encoded, over the limit of " + strconv.Itoa(MaxSettingValueBytes))
	}
	return b, nil
}

// typed is the setting's value for the invoke message: the stored one,
// else the default; ok is false when there is neither.
func (s *Setting) typed(stored jsontext.Value) (v any, ok bool, err error) {
	raw := stored
	if raw == nil {
		raw = s.Default
	}
	if raw == nil {
		return nil, false, nil
	}
	spec, err := s.spec()
	if err != nil {
		return nil, false, err
	}
	v, e := spec.fromJSON(raw, "")
	if e == nil {
		e = spec.check(v, "")
	}
	if e != nil {
		return nil, false, s.invalid(e.Message)
	}
	return v, true, nil
}

func (s *Setting) invalid(msg string) *Error {
	return Errorf(CodeInvalid, "setting %s: %s", strconv.Quote(s.ID), msg)
}

// ResolveSettings is what a call of a command of pkg delivers: each declared
// setting's stored value, else its default. A required setting with neither
// is a CodeInvalid error carrying the line that sets it; a stored value the
// declaration refuses is one too.
func ResolveSettings(pkg string, decls []Setting, stored map[string]jsontext.Value) (map[string]any, error) {
	out := make(map[string]any, len(decls))
	for i := range decls {
		s := &decls[i]
		v, ok, err := s.typed(stored[s.ID])
		if err != nil {
			msg := err.Error()
			var ke *Error
			if errors.As(err, &ke) {
				msg = ke.Message
			}
			return nil, Errorf(CodeInvalid, "%s; the stored value no longer fits the declaration of package %s; run: rukh settings set %s %s", msg, pkg, pkg, s.ID)
		}
		if !ok {
			if s.Required {
				return nil, Errorf(CodeInvalid, "setting %s of package %s is not set; run: rukh settings set %s %s", strconv.Quote(s.ID), pkg, pkg, s.ID)
			}
			continue
		}
		out[s.ID] = v
	}
	return out, nil
}

// validateSettings checks a manifest's settings: ids unique (ignoring
// case, so no two differ only in case), the input grammar's rules, and a
// default only where one makes sense.
func validateSettings(api string, ss []Setting) error {
	if len(ss) == 0 {
		return nil
	}
	if api != APIVersion2 {
		return invalidf("/settings", "settings need apiVersion %q", APIVersion2)
	}
	if len(ss) > MaxSettings {
		return invalidf("/settings", "a package declares at most %d settings, not %d", MaxSettings, len(ss))
	}
	seen := map[string]int{}
	for i := range ss {
		s := &ss[i]
		at := "/settings/" + strconv.Itoa(i)
		if !settingIDRE.MatchString(s.ID) {
			return invalidf(at+"/id", "setting id %q must match %s", s.ID, settingIDRE)
		}
		if j, dup := seen[strings.ToLower(s.ID)]; dup {
			return invalidf(at+"/id", "setting id %q is already declared by /settings/%d", s.ID, j)
		}
		seen[strings.ToLower(s.ID)] = i
		if err := checkText(at+"/description", s.Description, maxTextBytes, false); err != nil {
			return err
		}
		if s.Default != nil && s.Required {
			return invalidf(at+"/default", "a required setting has no default")
		}
		if s.Default != nil && s.Sensitive {
			return invalidf(at+"/default", "a sensitive setting has no default: it would be a secret in the manifest")
		}
		if _, err := newParamSpec(s.param(), at); err != nil {
			return err
		}
		if s.Default != nil {
			if len(s.Default) > MaxSettingValueBytes {
				return invalidf(at+"/default", "default is over the limit of %d bytes", MaxSettingValueBytes)
			}
		}
	}
	return nil
}
