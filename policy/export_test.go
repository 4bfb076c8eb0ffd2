package policy

// SetToolName replaces the tool name function for one test; real
// fingerprints (96 or 256 bits) never collide, so only this can prove that
// Build refuses a collision in compact and full mode.
func SetToolName(f func(mode, namespace, revision, commandID string) string) (restore func()) {
	old := toolName
	toolName = f
	return func() { toolName = old }
}

// SetUserHome replaces the owner's home directory, where "~/" in a
// template's paths resolves, for one test.
func SetUserHome(f func() (string, error)) (restore func()) {
	old := userHome
	userHome = f
	return func() { userHome = old }
}
