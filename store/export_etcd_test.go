//go:build etcd

package store

// EndLeaseForTest revokes the process lease of an etcd store's handle.
func EndLeaseForTest(s *Store) error {
	e := s.be.(*etcdStore)
	lease, err := e.processLease()
	if err != nil {
		return err
	}
	ctx, cancel := e.ctx()
	defer cancel()
	_, err = e.cli.Revoke(ctx, lease)
	return err
}
