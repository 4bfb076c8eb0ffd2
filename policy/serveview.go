package policy

import (
	"bytes"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
)

// ServeView is the part of a revision serve-mcp keeps in memory: releases,
// one endpoint's projection, and each command's declaration as raw JSON,
// decoded only when a call needs it. Routes, the profile and the other
// endpoints' tools are never decoded. With 10,000 tools this is most of
// the difference between fitting the serving memory target
// (docs/performance.md) and not.
type ServeView struct {
	Revision   string
	Releases   []BoundRelease
	Commands   []ServeCommand
	Projection *Projection // nil when the revision has no such endpoint
	Endpoints  []string    // every endpoint the revision has, for messages
	// Launch is the endpoint's launch binding as this revision's profile
	// has it (nil: no such endpoint), so serve-mcp can refuse a revision
	// that no longer matches the one it was started with.
	Launch *Launch
}

// ServeCommand is one bound command with its declaration still encoded.
type ServeCommand struct {
	Release     string           `json:"release"`
	Digest      string           `json:"digest"`
	ID          string           `json:"-"`
	Declaration jsontext.Value   `json:"declaration"`
	Settings    []kernel.Setting `json:"settings,omitempty"`
}

// Decode decodes the declaration (checked when the release was installed).
func (c *ServeCommand) Decode() (*kernel.Command, error) {
	var cmd kernel.Command
	if err := json.Unmarshal(c.Declaration, &cmd); err != nil {
		return nil, kernel.JSONError(err)
	}
	return &cmd, nil
}

// DecodeServeView reads a stored revision for one endpoint, streaming
// through it so nothing but the view is ever allocated.
func DecodeServeView(binding []byte, endpoint string) (*ServeView, error) {
	d := jsontext.NewDecoder(bytes.NewReader(binding))
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, kernel.Errorf(kernel.CodeInternal, "the revision is not a JSON object")
	}
	v := &ServeView{}
	for d.PeekKind() == '"' {
		name, err := d.ReadToken()
		if err != nil {
			return nil, kernel.JSONError(err)
		}
		switch name.String() {
		case "revision":
			err = json.UnmarshalDecode(d, &v.Revision)
		case "releases":
			err = json.UnmarshalDecode(d, &v.Releases)
		case "profile":
			var raw jsontext.Value
			if raw, err = d.ReadValue(); err == nil {
				var p *Profile
				if p, err = ParseProfile(raw); err == nil {
					v.Launch, _ = p.launchOf(endpoint)
				}
			}
		case "commands":
			err = decodeArray(d, func() error {
				var c ServeCommand
				if err := json.UnmarshalDecode(d, &c); err != nil {
					return err
				}
				var head struct {
					ID string `json:"id"`
				}
				if err := json.Unmarshal(c.Declaration, &head); err != nil {
					return err
				}
				c.ID = head.ID
				v.Commands = append(v.Commands, c)
				return nil
			})
		case "endpoints":
			err = decodeArray(d, func() error {
				var p Projection
				if err := json.UnmarshalDecode(d, &p); err != nil {
					return err
				}
				v.Endpoints = append(v.Endpoints, p.Endpoint)
				if p.Endpoint == endpoint {
					v.Projection = &p
				}
				return nil
			})
		default:
			err = d.SkipValue()
		}
		if err != nil {
			return nil, kernel.JSONError(err)
		}
	}
	return v, nil
}

func decodeArray(d *jsontext.Decoder, each func() error) error {
	if tok, err := d.ReadToken(); err != nil {
		return err
	} else if tok.Kind() != '[' {
		return kernel.Errorf(kernel.CodeInternal, "want an array, got %s", strconv.Quote(tok.Kind().String()))
	}
	for d.PeekKind() != ']' {
		if err := each(); err != nil {
			return err
		}
	}
	_, err := d.ReadToken()
	return err
}

// ServeView is the view of b for endpoint, as DecodeServeView would read it
// from the stored revision.
func (b *Binding) ServeView(endpoint string) (*ServeView, error) {
	data, err := json.Marshal(b, json.Deterministic(true))
	if err != nil {
		return nil, err
	}
	return DecodeServeView(data, endpoint)
}
