package kernel

import (
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// Manifest API versions the reader understands.
const (
	APIVersion1 = "rukh.extension/1"
	APIVersion2 = "rukh.extension/2"
)

// ManifestFile is the manifest's file name at a package root; SignatureFile
// sits beside it and holds the publisher's ed25519 signature of the digest.
const (
	ManifestFile  = "rukh-extension.json"
	SignatureFile = "rukh-extension.sig"
)

// Manifest is a parsed, validated rukh-extension.json. Values returned by
// ParseManifest have passed every rule of docs/manifest.md.
type Manifest struct {
	APIVersion  string    `json:"apiVersion"`
	Name        string    `json:"name"`
	Version     string    `json:"version"`
	Publisher   string    `json:"publisher,omitempty"`
	Description string    `json:"description,omitempty"`
	Settings    []Setting `json:"settings,omitempty"` // rukh.extension/2
	Commands    []Command `json:"commands"`
}

// Command is one declared command. ID is its stable identity.
type Command struct {
	ID          string     `json:"id"`
	Path        []string   `json:"path"`
	Aliases     [][]string `json:"aliases,omitempty"`
	Summary     string     `json:"summary,omitempty"`
	Description string     `json:"description,omitempty"`
	Params      []Param    `json:"params,omitempty"`
	Execute     Execute    `json:"execute"`
	Machine     *Machine   `json:"machine,omitempty"`
	Hints       *Hints     `json:"hints,omitempty"`
}

// ParamType is one of the input grammar's types (docs/manifest.md).
type ParamType string

const (
	TypeString  ParamType = "string"
	TypeBoolean ParamType = "boolean"
	TypeInteger ParamType = "integer"
	TypeNumber  ParamType = "number"
	TypeDecimal ParamType = "decimal"
	TypeList    ParamType = "list"
)

// Param declares one input. Exactly one of Flag and Position is set.
// Numeric bounds, defaults and enum members keep their exact JSON text so
// integers beyond 2^53 and decimals never pass through float64.
type Param struct {
	ID          string           `json:"id"`
	Type        ParamType        `json:"type"`
	Description string           `json:"description,omitempty"`
	Flag        string           `json:"flag,omitempty"`
	Short       string           `json:"short,omitempty"`
	Position    *int             `json:"position,omitempty"`
	Required    bool             `json:"required,omitempty"`
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

// ItemSpec is the scalar element type of a list param, with the same
// scalar constraints a param of that type may carry.
type ItemSpec struct {
	Type      ParamType        `json:"type"`
	Enum      []jsontext.Value `json:"enum,omitempty"`
	Minimum   jsontext.Value   `json:"minimum,omitempty"`
	Maximum   jsontext.Value   `json:"maximum,omitempty"`
	MinLength *int             `json:"minLength,omitempty"`
	MaxLength *int             `json:"maxLength,omitempty"`
}

// Execution modes and lifetimes.
const (
	ModeManaged     = "managed"
	ModePassthrough = "passthrough"

	LifetimeForeground = "foreground"
)

// Execute says how a command runs. Program is a slash-separated path inside
// the package; Args is a fixed argv prefix chosen by the publisher.
type Execute struct {
	Program  string      `json:"program"`
	Args     []string    `json:"args,omitempty"`
	Mode     string      `json:"mode,omitempty"`     // default managed
	Lifetime string      `json:"lifetime,omitempty"` // default foreground
	Result   *ResultDecl `json:"result,omitempty"`
	// Needs is what the command asks its endpoint's template to grant
	// (docs/confinement.md); it never grants anything itself.
	Needs *Needs `json:"needs,omitzero"`
}

// Result kinds.
const (
	ResultText       = "text"
	ResultStructured = "structured"
)

// ResultDecl declares what a successful command returns. Schema is the
// publisher's result schema (the result-schema subset of
// docs/manifest.md), exact JSON text.
type ResultDecl struct {
	Kind   string         `json:"kind"`
	Schema jsontext.Value `json:"schema,omitempty"`
}

// Interaction levels.
const (
	InteractionNone     = "none"
	InteractionOptional = "optional"
	InteractionRequired = "required"
)

// Machine declares programmatic use. Absent means not eligible.
type Machine struct {
	Eligible         bool      `json:"eligible"`
	Interaction      string    `json:"interaction,omitempty"`
	RequiredFeatures []Feature `json:"requiredFeatures,omitempty"`
}

// Feature names a core feature and its exact version.
type Feature struct {
	ID      string `json:"id"`
	Version int    `json:"version"`
}

// Hints are publisher intent hints; MCP maps them to tool annotations.
type Hints struct {
	Title       string `json:"title,omitempty"`
	ReadOnly    *bool  `json:"readOnly,omitempty"`
	Destructive *bool  `json:"destructive,omitempty"`
	Idempotent  *bool  `json:"idempotent,omitempty"`
	OpenWorld   *bool  `json:"openWorld,omitempty"`
}

// Features the core registers; requiredFeatures must name one of these.
var Features = map[string]int{"command-result": 1}

// BuiltinVerbs are the words reserved for the core: never a path word, alias
// word or group at the top level. They are the CLI's top-level commands (a
// test walks the CLI tree against this list), the help words, and rukh, the
// built-in namespace.
var BuiltinVerbs = []string{
	"help", "h", "completion",
	"install", "uninstall", "trust", "keygen", "package", "activate", "deactivate", "policy",
	"publish", "dev", "revisions", "rollback", "list", "status", "describe", "tools",
	"serve-mcp", "serve-http", "mcp-config", "agent", "settings", "audit", "tasks", "store",
	"diagnostics", "doctor", "version",
	"rukh",
}

// IsBuiltinVerb reports whether word is reserved for the core.
func IsBuiltinVerb(word string) bool { return slices.Contains(BuiltinVerbs, word) }
