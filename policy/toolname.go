package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
)

// ToolNameDomain is the first element of the fingerprinted array; it
// separates tool-name hashes from any other hash Rukh may compute.
const ToolNameDomain = "rukh.mcp-tool/1"

const (
	maxSlugFull    = 48
	maxSlugCompact = 16
	maxSlugStable  = 64
	compactHexLen  = 24

	// MaxHostToolName is the tool name length popular hosts (Claude,
	// Cursor, Copilot) accept, counting their own mcp__server__ prefix.
	MaxHostToolName = 64
)

// ToolName returns the MCP tool name of a command in an endpoint's namespace
// and revision (docs/design.md, Names and fingerprints). mode is "compact"
// (or empty, the default): slug of at most 16 characters + "__" + 24 hex
// digits of the fingerprint; "full": slug of at most 48 + "__" + all 64 hex
// digits; "stable": the slug alone, at most 64 characters, the same in every
// revision. It returns "" only when the inputs cannot be canonicalised
// (invalid UTF-8), which Build rules out beforehand.
func ToolName(mode, namespace, revision, commandID string) string {
	if mode == ToolNamesStable {
		return slug(commandID, maxSlugStable)
	}
	fp, err := Fingerprint(namespace, revision, commandID)
	if err != nil {
		return ""
	}
	if mode == ToolNamesFull {
		return slug(commandID, maxSlugFull) + "__" + fp
	}
	return slug(commandID, maxSlugCompact) + "__" + fp[:compactHexLen]
}

// CompareTools is an endpoint's tool order: kernel.CompareTools.
func CompareTools(a, b *Tool) int {
	return kernel.CompareTools(a.Name, a.Command, b.Name, b.Command)
}

// Fingerprint is the lowercase hex SHA-256 of the RFC 8785 form of
// ["rukh.mcp-tool/1", namespace, revision, commandID].
func Fingerprint(namespace, revision, commandID string) (string, error) {
	raw, err := json.Marshal([]string{ToolNameDomain, namespace, revision, commandID})
	if err != nil {
		return "", err
	}
	// jsontext's RFC 8785 form (policy's tests check it against an
	// independent implementation): a separate JCS package would compile a
	// regular expression in every process at start.
	canon := jsontext.Value(raw)
	if err := canon.Canonicalize(); err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// slug maps a command identity into [a-z0-9_-], one '_' per other
// character, cut to max characters.
func slug(id string, max int) string {
	var b strings.Builder
	n := 0
	for _, r := range id {
		if n == max {
			break
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		n++
	}
	return b.String()
}
