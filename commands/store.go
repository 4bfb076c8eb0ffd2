package commands

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

func (a *app) storeCmd() *cli.Command {
	return &cli.Command{
		Name:  "store",
		Usage: "move the store between backends: copy a bbolt home into etcd, or back",
		Commands: []*cli.Command{{
			Name:  "copy",
			Usage: "copy the whole store into an empty one and verify the copy key by key",
			Description: "Copies the current store (the bbolt file of RUKH_HOME, or the etcd store of --store/RUKH_STORE)\n" +
				"into the destination --to names:\n\n" +
				"   --to etcd://HOST:PORT[,HOST:PORT…]/PREFIX   an etcd store (etcds:// or ?ca=&cert=&key= for TLS;\n" +
				"                                              RUKH_STORE_CA, RUKH_STORE_CERT, RUKH_STORE_KEY apply too)\n" +
				"   --to DIR                                   a bbolt home: the directory RUKH_HOME would name\n\n" +
				"The destination must be empty. Everything is copied: releases, keys, the draft, every revision,\n" +
				"agents and their credentials, tasks and the audit log. Package archives go into an etcd\n" +
				"destination; a bbolt destination gets the package copies in its home. A verification pass then\n" +
				"compares both stores bucket by bucket and key by key, and each package by its digest.\n" +
				"Stop whatever writes to the source (serve-http, serve-mcp) while it runs.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "to", Usage: "the destination: etcd://HOST:PORT/PREFIX, or the directory of a bbolt home"},
				jsonFlag(),
			},
			Action: func(ctx context.Context, c *cli.Command) error {
				if err := noArgs(c); err != nil {
					return err
				}
				dst, err := a.openDestination(c.String("to"))
				if err != nil {
					return err
				}
				defer dst.Close()
				return a.runStoreCopy(storeCopyOptions{dst: dst, json: c.Bool("json")})
			},
		}},
	}
}

// openDestination opens what --to names: an etcd URL, or a home directory.
func (a *app) openDestination(spec string) (*store.Store, error) {
	switch {
	case spec == "":
		return nil, kernel.Errorf(kernel.CodeUsage, "store copy needs --to").
			WithHint("give --to etcd://HOST:PORT/PREFIX, or --to DIR for a bbolt home in DIR")
	case store.IsEtcdURL(spec):
		return store.OpenEtcd(spec, a.h.Store.Home(), store.EtcdOptions{CA: a.h.Env("RUKH_STORE_CA"), Cert: a.h.Env("RUKH_STORE_CERT"), Key: a.h.Env("RUKH_STORE_KEY")})
	case strings.Contains(spec, "://"):
		return nil, kernel.Errorf(kernel.CodeUsage, "--to %q is not a store URL", spec).
			WithHint("give etcd://HOST:PORT[,HOST:PORT…]/PREFIX, or the directory of a bbolt home")
	}
	dir, err := filepath.Abs(spec)
	if err != nil {
		return nil, usageErr("cannot resolve --to %q", spec)
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, kernel.Errorf(kernel.CodeUsage, "--to %s is a file, not a home directory", spec).
			WithHint("give the directory that will be the new RUKH_HOME; rukh creates its " + store.DBName)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, kernel.Errorf(kernel.CodeInvalid, "cannot read --to %s", spec).Wrap(err)
	}
	return store.New(dir), nil
}

// storeCopyOptions are store copy's flags, --to opened.
type storeCopyOptions struct {
	dst  *store.Store
	json bool
}

// runStoreCopy copies the store into o.dst (home.StoreCopy) and prints
// what it copied and verified.
func (a *app) runStoreCopy(o storeCopyOptions) error {
	dst := o.dst
	res, err := a.h.StoreCopy(dst)
	if err != nil {
		return err
	}
	if o.json {
		return printJSON(a.stdout, res)
	}
	fmt.Fprintf(a.stdout, "copied %s to %s\n", res.From, res.To)
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BUCKET\tKEYS\tBYTES")
	for _, b := range res.Buckets {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", b.Name, b.Keys, b.Bytes)
	}
	for _, b := range res.Tasks {
		if b.Keys > 0 {
			fmt.Fprintf(tw, "task records: %s\t%d\t%d\n", b.Name, b.Keys, b.Bytes)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "%s, %s, %s\n", plural(len(res.Buckets)+len(res.Tasks), "bucket"), plural(res.Keys, "key"), sizeText(res.Bytes))
	switch {
	case len(res.Packages) == 0:
	case dst.Shared() && a.h.Store.Shared():
		fmt.Fprintf(a.stdout, "%s, copied with the blobs bucket\n", plural(len(res.Packages), "package archive"))
	case dst.Shared():
		fmt.Fprintf(a.stdout, "%s put into the destination\n", plural(len(res.Packages), "package archive"))
	default:
		fmt.Fprintf(a.stdout, "%s made in %s\n", plural(len(res.Packages), "package copy", "package copies"), dst.Home())
	}
	n := len(res.Packages) // every release, or StoreCopy failed
	fmt.Fprintf(a.stdout, "verified: %s, %s the same in both stores (sha256 %s); %s matching %s digest\n",
		plural(res.Verified.Buckets, "bucket"), plural(res.Verified.Keys, "key"), res.Verified.SHA256[:16],
		plural(n, "package"), yesno(n == 1, "its", "their"))
	return nil
}

// sizeText is n bytes for people.
func sizeText(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// plural is "1 key", "2 keys"; many is the plural when it is not one+"s".
func plural(n int, one string, many ...string) string {
	if n == 1 {
		return "1 " + one
	}
	if len(many) > 0 {
		return fmt.Sprintf("%d %s", n, many[0])
	}
	return fmt.Sprintf("%d %ss", n, one)
}
