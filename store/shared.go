package store

import (
	"strings"
	"time"
)

// EtcdOptions are the connection settings of an etcd store.
type EtcdOptions struct {
	CA, Cert, Key string        // PEM files: the cluster's CA, a client certificate and its key
	DialTimeout   time.Duration // zero: 5 s
}

// IsEtcdURL reports whether spec names an etcd store.
func IsEtcdURL(spec string) bool {
	return strings.HasPrefix(spec, "etcd://") || strings.HasPrefix(spec, "etcds://")
}

// EtcdBuilt reports whether this binary has the etcd backend (-tags etcd).
func EtcdBuilt() bool { return etcdBuilt }

// sharedHold reports whether a hold of kind lives in etcd.
func sharedHold(kind string) bool { return kind != HoldRelease }
