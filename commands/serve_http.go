package commands

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/oauth"
	"github.com/rukh-dev/rukh/serve"
	"github.com/urfave/cli/v3"
)

func (a *app) serveHTTPCmd() *cli.Command {
	return &cli.Command{
		Name:  "serve-http",
		Usage: "serve the published tools of every HTTP endpoint to many agents over MCP Streamable HTTP",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:8787", Usage: "the address to listen on (host:port; port 0 picks one)"},
			&cli.StringFlag{Name: "tls-cert", Usage: "serve HTTPS with this certificate (PEM)"},
			&cli.StringFlag{Name: "tls-key", Usage: "the certificate's private key (PEM)"},
			&cli.BoolFlag{Name: "insecure-http", Usage: "allow plain HTTP on a non-loopback address"},
			&cli.StringSliceFlag{Name: "allow-origin", Usage: "an Origin browsers may call from (repeatable)"},
			&cli.StringSliceFlag{Name: "allow-host", Usage: "a Host name clients reach this server by, besides the loopback names (repeatable)"},
			&cli.FloatFlag{Name: "rate", Value: 50, Usage: "requests per second each agent may make (0: unlimited)"},
			&cli.IntFlag{Name: "burst", Value: 100, Usage: "requests an agent may make at once above its rate"},
			&cli.StringFlag{Name: "metrics-listen", Usage: "serve Prometheus metrics on this separate address (host:port)"},
			&cli.StringFlag{Name: "public-url", Usage: "the scheme and host clients reach this server by, behind a proxy (https://host[:port]): the base of OAuth resource and metadata URLs"},
			&cli.DurationFlag{Name: "oauth-refresh", Value: oauth.DefaultMinRefresh, Usage: "the least time between two fetches of an identity provider's keys or discovery document (at least 1s): a token signed by a key not yet fetched, or a provider that was down, waits at most this long"},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() > 0 {
				return usageErr("serve-http takes no arguments")
			}
			o := serveHTTPOptions{
				listen: c.String("listen"), tlsCert: c.String("tls-cert"), tlsKey: c.String("tls-key"),
				insecureHTTP: c.Bool("insecure-http"), allowOrigins: c.StringSlice("allow-origin"), allowHosts: c.StringSlice("allow-host"),
				rate: c.Float("rate"), burst: int(c.Int("burst")), metricsListen: c.String("metrics-listen"),
				oauthRefresh: c.Duration("oauth-refresh"),
			}
			if o.oauthRefresh < time.Second {
				return usageErr("--oauth-refresh is at least 1s, not %s", o.oauthRefresh)
			}
			if v := c.String("public-url"); v != "" {
				u, err := serve.ParsePublicURL(v)
				if err != nil {
					return err
				}
				o.publicURL = u
			}
			if (o.tlsCert == "") != (o.tlsKey == "") {
				return usageErr("--tls-cert and --tls-key go together")
			}
			return a.runServeHTTP(ctx, o)
		},
	}
}

type serveHTTPOptions struct {
	listen, tlsCert, tlsKey  string
	insecureHTTP             bool
	allowOrigins, allowHosts []string
	rate                     float64
	burst                    int
	metricsListen            string
	publicURL                string
	oauthRefresh             time.Duration
}

func (a *app) runServeHTTP(ctx context.Context, o serveHTTPOptions) error {
	kernel.DetachTerminal() // as serve-mcp does
	if n := runtime.GOMAXPROCS(0); serveHTTPProcs(os.Getenv, n) != n {
		runtime.GOMAXPROCS(serveHTTPProcs(os.Getenv, n))
	}
	log := newVerbLog(a.stderr, "serve-http")
	defer log.close()
	a.h.Runner.WarmSlots(log.Logf) // as serve-mcp does
	return serve.HTTP(ctx, serve.HTTPOptions{
		Home:          a.h,
		Listen:        o.listen,
		TLSCert:       o.tlsCert,
		TLSKey:        o.tlsKey,
		InsecureHTTP:  o.insecureHTTP,
		AllowOrigins:  o.allowOrigins,
		AllowHosts:    o.allowHosts,
		Rate:          o.rate,
		Burst:         o.burst,
		MetricsListen: o.metricsListen,
		PublicURL:     o.publicURL,
		OAuthRefresh:  o.oauthRefresh,
		Version:       version(),
		Logf:          log.Logf,
		Line:          log.Line,
	})
}

// serveHTTPProcs is how many Ps serve-http's goroutines run on, given the
// number Go chose (n, its CPUs or its container's share): one fewer, at
// least one. Most of a call's CPU is not the server's (the program and its
// init are processes of their own), and every P is per-P memory and
// threads held at the peak of many agents at once (docs/performance.md).
// A GOMAXPROCS the owner set (a positive integer, as Go reads it) is kept.
// Setting it stops Go following later changes of the CPU limit; the count
// is fixed for the server's life.
func serveHTTPProcs(getenv func(string) string, n int) int {
	if v, err := strconv.Atoi(getenv("GOMAXPROCS")); err == nil && v > 0 {
		return n
	}
	return max(1, n-1)
}
