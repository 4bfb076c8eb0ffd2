package oauth

import (
	"context"
	"testing"

	"github.com/go-jose/go-jose/v4"
)

// BenchmarkVerify is what checking one access token costs serve-http
// once its issuer's keys are cached: parsing, the signature and the
// claims (docs/performance.md).
func BenchmarkVerify(b *testing.B) {
	for _, bc := range []struct {
		name string
		alg  jose.SignatureAlgorithm
		key  any
	}{{"RS256", jose.RS256, rsaKey}, {"ES256", jose.ES256, ecKey}, {"EdDSA", jose.EdDSA, edKey}} {
		b.Run(bc.name, func(b *testing.B) {
			is := newIssuer(b, "")
			is.addKey("k-1", bc.key)
			clk := &clock{now: t0}
			v := newVerifier(b, is, clk)
			tok := sign(b, bc.alg, bc.key, "k-1", "at+jwt", goodClaims(is))
			if _, err := v.Verify(context.Background(), tok); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.Verify(context.Background(), tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
