// Package policy owns the owner's profile, publication and visibility: it
// turns a draft (profile + active releases) into one validated Binding — the
// CLI routes and the MCP projection of every endpoint — that the store keeps
// as an immutable revision, and it decides per request what an endpoint sees.
//
// policy imports kernel only; it never touches bbolt, the terminal or MCP wire.
package policy

import (
	"fmt"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
)

// Binding is everything one published revision binds. It is computed once by
// Build at publish time, stored as JSON by the store, and read (and cached by
// revision id) by the CLI and serve-mcp. It is self-contained: running a
// command needs nothing from the draft.
type Binding struct {
	Revision  string         `json:"revision"` // activeProfileRevision, e.g. "r7"
	Profile   jsontext.Value `json:"profile"`  // the normalised profile JSON
	Releases  []BoundRelease `json:"releases"`
	Commands  []BoundCommand `json:"commands"`
	Routes    []Route        `json:"routes"`
	Endpoints []Projection   `json:"endpoints"`
}

// BoundRelease is one active release the revision binds.
type BoundRelease struct {
	Name          string `json:"name"`
	Version       string `json:"version"`
	Digest        string `json:"digest"`
	Dir           string `json:"dir"`
	APIVersion    string `json:"apiVersion"`
	Signer        string `json:"signer,omitempty"`
	AllowUnsigned bool   `json:"allowUnsigned,omitempty"`
	// Development marks an author's working copy (`rukh dev`): its version
	// is the store's, not the manifest's, and only DevEndpoint publishes it.
	Development bool `json:"development,omitzero"`
	// Settings are the package's declared settings (what status and
	// doctor check for missing required values without reading manifests).
	Settings []kernel.Setting `json:"settings,omitempty"`
}

// BoundCommand pins one command's declaration to its release.
type BoundCommand struct {
	Release     string         `json:"release"` // name@version
	Digest      string         `json:"digest"`
	Declaration kernel.Command `json:"declaration"`
	Eligible    bool           `json:"eligible"`
	// Development: the release is a development copy (`rukh dev`); the
	// index sets it so a command's copy is found from its record alone.
	Development bool   `json:"development,omitzero"`
	Reason      string `json:"reason,omitempty"` // why not eligible
	// Settings are the package's declared settings, carried by each of its
	// commands so that a call finds them from its record alone.
	Settings []kernel.Setting `json:"settings,omitempty"`
}

// Package is the name of the release the command belongs to.
func (bc *BoundCommand) Package() string {
	name, _, _ := strings.Cut(bc.Release, "@")
	return name
}

// Route kinds.
const (
	RouteCommand = "command"
	RouteAlias   = "alias"
	RouteGroup   = "group"
)

// Route is one CLI word path: a command, an alias of one, or a group.
type Route struct {
	Words   []string `json:"words"`
	Kind    string   `json:"kind"`
	Command string   `json:"command,omitempty"` // command identity; empty for groups
}

// Projection is the MCP view of the revision for one endpoint.
type Projection struct {
	Endpoint  string   `json:"endpoint"`
	Namespace string   `json:"namespace"`
	ToolNames string   `json:"toolNames"` // full | compact
	Subject   string   `json:"subject"`
	Template  Template `json:"template"`
	Tools     []Tool   `json:"tools"` // in their order: CompareTools
	// Unavailable says why this host cannot enforce the template's
	// confinement ("" when it can): the endpoint then publishes nothing.
	Unavailable string `json:"unavailable,omitempty"`
	// Withheld are the commands the endpoint's publish list names that
	// its template keeps from being tools there, in command id order.
	Withheld []Withheld `json:"withheld,omitempty"`
}

// Withheld is a command an endpoint would publish but for its template:
// the command needs more than the template grants, or the host cannot
// provide the template. Fix is the change that publishes it.
type Withheld struct {
	Command string `json:"command"`
	Reason  string `json:"reason"`
	Fix     string `json:"fix,omitempty"`
}

// Template holds the limits an endpoint's invocations run under: Name is
// the profile's template name (empty in revisions from before it was
// recorded), Confine its confinement with every path absolute or a
// keyword (nil: unconfined).
type Template struct {
	Name             string          `json:"name,omitempty"`
	TimeoutMs        int64           `json:"timeoutMs"`
	MaxConcurrent    int             `json:"maxConcurrent"`
	MaxHeld          int             `json:"maxHeld"`
	DiagnosticsBytes int             `json:"diagnosticsBytes"`
	ResultBytes      int             `json:"resultBytes"`
	Confine          *kernel.Confine `json:"confine,omitzero"`
	// Unreadable, when set, says why the endpoint's template could not be
	// read: nothing runs under it (not even unconfined).
	Unreadable string `json:"-"`
}

// UnreadableTemplate is the template of an endpoint whose stored meta
// cannot be decoded: it runs nothing.
func UnreadableTemplate(err error) Template {
	return Template{Unreadable: fmt.Sprintf("the endpoint's template cannot be read (%v); run 'rukh doctor'", err)}
}

// Tool is one published MCP tool. Wire is the exact tool object sent in
// tools/list (name, title, description, inputSchema, outputSchema,
// annotations), pre-encoded at publish time so listing is a copy.
type Tool struct {
	Name    string         `json:"name"`
	Command string         `json:"command"` // command identity
	Release string         `json:"release"` // name@version
	Wire    jsontext.Value `json:"wire"`
	// Security is the command's level on the endpoint when it is not
	// standard (see Level).
	Security string `json:"security,omitempty"`
	// Sum is the SHA-256 of the tool object without its name, one line,
	// in the summaries Stream returns and commands read for a diff,
	// which hold no Wire.
	Sum [32]byte `json:"-"`

	declRef, bodyRef string // the sink's refs, while Stream writes
}

// Limits turns the template into the kernel's per-invocation limits; the
// CLI (local endpoint) and serve-mcp both run commands under it.
func (t Template) Limits() kernel.Limits {
	return kernel.Limits{
		Timeout:     time.Duration(t.TimeoutMs) * time.Millisecond,
		ResultBytes: t.ResultBytes,
		Confine:     t.Confine,
		Template:    t.Name,
		Refuse:      t.Unreadable,
	}
}
