package policy

// SetToolName replaces the tool name function for one test; real
// fingerprints (96 or 256 bits) never collide, so only this can prove that
// Build refuses a collision in compact and full mode.
func SetToolName(f func(mode, namespace, revision, commandID string) string) (restore func()) {
	old := toolName
	toolName = f
	return func() { toolName = old }
}
