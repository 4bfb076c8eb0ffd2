//go:build !linux

package serve

func dropStartupPages() {}
