package policy

import "github.com/rukh-dev/rukh/kernel"

// The records a call reads (a declaration, an endpoint's meta) read member
// by member first, without reflection (kernel.PlainReader); one that is not
// in the plain form rukh writes is decoded by reflection, which accepts or
// refuses it as it always has.

func plainCommand(raw []byte) (*BoundCommand, bool) {
	bc := &BoundCommand{}
	r := kernel.NewPlainReader(raw)
	r.Object(func(name string) {
		switch name {
		case "release":
			bc.Release = r.String()
		case "digest":
			bc.Digest = r.String()
		case "declaration":
			r.Command(&bc.Declaration)
		case "eligible":
			bc.Eligible = r.Bool()
		case "development":
			bc.Development = r.Bool()
		case "reason":
			bc.Reason = r.String()
		case "settings":
			bc.Settings = []kernel.Setting{}
			r.Array(func() {
				bc.Settings = append(bc.Settings, kernel.Setting{})
				r.Setting(&bc.Settings[len(bc.Settings)-1])
			})
		default:
			r.Skip()
		}
	})
	return bc, r.OK()
}

func plainEndpointMeta(raw []byte) (EndpointMeta, bool) {
	var m EndpointMeta
	r := kernel.NewPlainReader(raw)
	r.Object(func(name string) {
		switch name {
		case "namespace":
			m.Namespace = r.String()
		case "toolNames":
			m.ToolNames = r.String()
		case "subject":
			m.Subject = r.String()
		case "template":
			plainTemplate(r, &m.Template)
		case "unavailable":
			m.Unavailable = r.String()
		case "withheld":
			m.Withheld = []Withheld{}
			r.Array(func() {
				var w Withheld
				r.Object(func(name string) {
					switch name {
					case "command":
						w.Command = r.String()
					case "reason":
						w.Reason = r.String()
					case "fix":
						w.Fix = r.String()
					default:
						r.Skip()
					}
				})
				m.Withheld = append(m.Withheld, w)
			})
		default:
			r.Skip()
		}
	})
	return m, r.OK()
}

func plainTemplate(r *kernel.PlainReader, t *Template) {
	r.Object(func(name string) {
		switch name {
		case "name":
			t.Name = r.String()
		case "timeoutMs":
			t.TimeoutMs = r.Int64()
		case "maxConcurrent":
			t.MaxConcurrent = r.Int()
		case "maxHeld":
			t.MaxHeld = r.Int()
		case "diagnosticsBytes":
			t.DiagnosticsBytes = r.Int()
		case "resultBytes":
			t.ResultBytes = r.Int()
		case "confine":
			t.Confine = r.Confine()
		default:
			r.Skip()
		}
	})
}
