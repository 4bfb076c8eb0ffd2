//go:build rukh_portable

package store_test

func init() { portableBuild = true }
