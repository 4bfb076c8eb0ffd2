package store

// ReleasesAt returns name@version for each name of versions, in the order of
// names, from one read: publishing a thousand packages opens the store
// once, not a thousand times.
func (s *Store) ReleasesAt(names []string, versions map[string]string) ([]Release, error) {
	out := make([]Release, 0, len(names))
	missing := -1
	_, err := s.view(func(tx txn) error {
		b := tx.Bucket(bucketReleases)
		for i, n := range names {
			raw := b.Get(releaseKey(n, versions[n]))
			if raw == nil {
				missing = i
				return nil
			}
			var rec releaseRec
			if err := s.decodeRelease("release", raw, &rec); err != nil {
				return err
			}
			out = append(out, fromReleaseRec(rec))
		}
		return nil
	})
	if err == nil && missing >= 0 {
		err = notInstalled(names[missing], versions[names[missing]])
	}
	if err == nil && len(out) < len(names) {
		err = notInstalled(names[len(out)], versions[names[len(out)]]) // no store file yet
	}
	return out, err
}

// BucketStat is the size of one bucket of the store file.
type BucketStat struct {
	Name  string
	Keys  int
	Bytes int // bytes in use (bbolt: leaf and branch pages; etcd: keys and values)
}

// Stats sizes every bucket, for reports on what a revision costs.
func (s *Store) Stats() ([]BucketStat, error) {
	var out []BucketStat
	_, err := s.view(func(tx txn) error {
		return tx.ForEach(func(name []byte, b bucket) error {
			st := b.Stats()
			out = append(out, BucketStat{Name: string(name), Keys: st.KeyN, Bytes: st.Bytes})
			return nil
		})
	})
	return out, err
}
