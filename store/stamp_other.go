//go:build !unix

package store

func fileStamp(string) (Stamp, bool) { return Stamp{}, false }
