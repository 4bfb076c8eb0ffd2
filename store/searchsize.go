package store

// SearchSize is what an endpoint's search records of a revision occupy:
// its postings ('s') and tool-number ('n') records, keys and values, and
// the term bags ('k' objects) of its tools' bodies, which revisions
// share. A report figure (bench/indexprobe, scripts/bench.sh): it walks
// every record, so it costs O(catalogue).
type SearchSize struct {
	Postings, Names, Bags             int   // records
	PostingBytes, NameBytes, BagBytes int64 // keys and values
}

// SearchSize measures endpoint's search records in this revision.
func (ix *Index) SearchSize(endpoint string) (SearchSize, error) {
	var sz SearchSize
	if err := ix.searchable(endpoint); err != nil {
		return sz, err
	}
	if err := ix.walk(endpointPrefix(ix.gen, tagSearch, endpoint), func(k, v []byte) error {
		sz.Postings++
		sz.PostingBytes += int64(len(k) + len(v))
		return nil
	}); err != nil {
		return sz, err
	}
	if err := ix.walk(endpointPrefix(ix.gen, tagName, endpoint), func(k, v []byte) error {
		sz.Names++
		sz.NameBytes += int64(len(k) + len(v))
		return nil
	}); err != nil {
		return sz, err
	}
	seen := map[string]bool{}
	err := ix.Tools(endpoint, func(t Tool) error {
		if seen[t.Body] {
			return nil
		}
		seen[t.Body] = true
		key := termsKey(t.Body)
		if v := ix.get(ix.object, key); v != nil {
			sz.Bags++
			sz.BagBytes += int64(len(key) + len(v))
		}
		return nil
	})
	return sz, err
}
