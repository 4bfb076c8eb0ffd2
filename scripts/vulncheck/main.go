// Command vulncheck is the offline side of the suite's govulncheck step.
//
//	go run ./scripts/vulncheck db -vulndb VERSION -out DIR
//	go tool govulncheck -db file://DIR -format json ./... | go run ./scripts/vulncheck verdict [-stdlib warn|fail]
//
// db builds the vulnerability database govulncheck reads from a directory,
// out of the OSV entries of golang.org/x/vulndb at VERSION, fetched through
// the module proxy: the public database's own endpoint is not reachable from
// every machine that runs the tests, the module proxy is. scripts/test.sh
// pins the snapshot and caches the database per pinned version.
//
// verdict reads govulncheck's JSON stream, prints every vulnerability the
// code reaches (the called symbol and one call site of ours) and counts the
// rest, and fails when a module the code reaches a vulnerability in has one;
// with -stdlib warn, one in the Go standard library (fixed by the Go release
// that builds rukh, not by go.mod) is printed but does not fail.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "db":
		runDB(os.Args[2:])
	case "verdict":
		runVerdict(os.Args[2:])
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: vulncheck db -vulndb VERSION -out DIR\n       vulncheck verdict [-stdlib warn|fail] < govulncheck.json")
	os.Exit(2)
}

func runDB(args []string) {
	fs := flag.NewFlagSet("db", flag.ExitOnError)
	version := fs.String("vulndb", "", "version of the golang.org/x/vulndb module to build the database from")
	out := fs.String("out", "", "directory to create the database in")
	_ = fs.Parse(args)
	if *version == "" || *out == "" || fs.NArg() != 0 {
		usage()
	}
	dir, taken, err := download("golang.org/x/vulndb@" + *version)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vulncheck db:", err)
		os.Exit(1)
	}
	n, err := build(filepath.Join(dir, "data", "osv"), *out, taken)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vulncheck db:", err)
		os.Exit(1)
	}
	fmt.Printf("vulncheck db: %d entries of golang.org/x/vulndb@%s in %s\n", n, *version, *out)
}

// download fetches a module through the go command (and so the module
// proxy and the module cache) and returns its directory and the time of
// its commit.
func download(module string) (dir string, taken time.Time, err error) {
	cmd := exec.Command("go", "mod", "download", "-json", module)
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return "", time.Time{}, fmt.Errorf("go mod download %s: %v", module, err)
	}
	var m struct{ Dir, Info string }
	if err := json.Unmarshal(b, &m); err != nil {
		return "", time.Time{}, fmt.Errorf("go mod download %s: %v", module, err)
	}
	b, err = os.ReadFile(m.Info)
	if err != nil {
		return "", time.Time{}, err
	}
	var info struct{ Time time.Time }
	if err := json.Unmarshal(b, &info); err != nil {
		return "", time.Time{}, fmt.Errorf("%s: %v", m.Info, err)
	}
	return m.Dir, info.Time, nil
}

func runVerdict(args []string) {
	fs := flag.NewFlagSet("verdict", flag.ExitOnError)
	stdlib := fs.String("stdlib", "fail", "what a reached vulnerability in the Go standard library does: warn or fail")
	_ = fs.Parse(args)
	if (*stdlib != "warn" && *stdlib != "fail") || fs.NArg() != 0 {
		usage()
	}
	r, err := readReport(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vulncheck verdict:", err)
		os.Exit(1)
	}
	r.print(os.Stdout)
	if r.fails(*stdlib == "fail") {
		os.Exit(1)
	}
}
