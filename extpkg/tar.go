package extpkg

import (
	"archive/tar"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/rukh-dev/rukh/kernel"
)

// sniff classifies an archive by its first bytes, not its name.
func sniff(head []byte) string {
	switch {
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		return "gzip"
	case len(head) >= 262 && bytes.HasPrefix(head[257:], []byte("ustar")):
		return "tar"
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return "zip"
	}
	return ""
}

// countingReader counts compressed bytes and fails once more than max
// were read, so a limit holds whatever the file's size claims.
type countingReader struct {
	r    io.Reader
	n    int64
	max  int64
	over bool
}

var errArchiveTooLarge = errors.New("archive too large")

// headerAllowance is the decompressed header bytes allowed per entry on
// top of file data (a 512-byte header plus pax or GNU long-name records).
const headerAllowance = 8 << 10

func (c *countingReader) Read(p []byte) (int, error) {
	if c.over {
		return 0, errArchiveTooLarge
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.max {
		c.over = true
		return n, errArchiveTooLarge
	}
	return n, err
}

type extractor struct {
	dest    string
	lim     *limits
	cr      *countingReader // compressed bytes
	ur      *countingReader // decompressed bytes
	kinds   map[string]xkind
	total   int64
	entries int
}

type xkind uint8

const (
	xImplicitDir xkind = iota + 1
	xDir
	xFile
	xLink
)

// archiveError turns a gzip/tar read failure into a specific message.
func (x *extractor) archiveError(err error) error {
	var ke *kernel.Error
	switch {
	case errors.As(err, &ke):
		return ke
	case x.cr.over:
		return invalid("", "archive is larger than %d bytes", x.lim.archiveBytes)
	case x.ur != nil && x.ur.over:
		return invalid("", "archive expands to more than %d bytes", x.ur.max)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return invalid("", "archive is truncated")
	case errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader), errors.As(err, new(flate.CorruptInputError)):
		return kernel.Errorf(kernel.CodeInvalid, "archive is corrupt").Wrap(err)
	case errors.Is(err, tar.ErrHeader), errors.Is(err, tar.ErrFieldTooLong):
		return kernel.Errorf(kernel.CodeInvalid, "archive is corrupt").Wrap(err)
	}
	return kernel.Errorf(kernel.CodeInvalid, "cannot read archive").Wrap(err)
}

// extract unpacks a .tar.gz stream into the empty directory dest, checking
// every entry before anything is created for it. Nothing is ever written
// through a symlink: parents must be directories this extraction made, and
// files are created with O_EXCL.
func extract(r io.Reader, dest string, lim *limits) error {
	x := &extractor{
		dest:  dest,
		lim:   lim,
		cr:    &countingReader{r: r, max: lim.archiveBytes},
		kinds: map[string]xkind{},
	}
	gz, err := gzip.NewReader(x.cr)
	if err != nil {
		return x.archiveError(err)
	}
	// Bound the whole decompressed stream too: file data is bounded by
	// packageBytes, and headers (pax records up to 1 MiB each) by this.
	x.ur = &countingReader{r: gz, max: x.lim.packageBytes + int64(x.lim.files)*headerAllowance + maxTrailingBytes}
	tr := tar.NewReader(x.ur)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil && !errors.Is(err, tar.ErrInsecurePath) {
			return x.archiveError(err)
		}
		if err := x.entry(hdr, tr); err != nil {
			return err
		}
	}
	// Read to the end of the gzip stream so its checksum is verified.
	n, err := io.Copy(io.Discard, io.LimitReader(x.ur, maxTrailingBytes+1))
	if err != nil {
		return x.archiveError(err)
	}
	if n > maxTrailingBytes {
		return invalid("", "archive has data after the end of the tar stream")
	}
	return nil
}

// cleanName turns an entry name into a package path; "" is the root.
func cleanName(raw string) (string, error) {
	if strings.HasPrefix(raw, "/") {
		return "", invalid(raw, "entry %q is an absolute path", raw)
	}
	var elems []string
	for _, e := range strings.Split(raw, "/") {
		switch e {
		case "", ".":
			continue
		case "..":
			return "", invalid(raw, "entry %q escapes the package", raw)
		}
		elems = append(elems, e)
	}
	return strings.Join(elems, "/"), nil
}

func (x *extractor) count(rel string) error {
	x.entries++
	if x.entries > x.lim.files {
		return invalid("", "package has more than %d files and directories", x.lim.files)
	}
	return nil
}

// parents makes the missing parent directories of rel, refusing a parent
// that is a file or symlink.
func (x *extractor) parents(rel string) error {
	dir := path.Dir(rel)
	if dir == "." {
		return nil
	}
	elems := strings.Split(dir, "/")
	for i := range elems {
		p := strings.Join(elems[:i+1], "/")
		switch k := x.kinds[p]; k {
		case xDir, xImplicitDir:
			continue
		case 0:
			if err := x.count(p); err != nil {
				return err
			}
			if err := os.Mkdir(x.path(p), 0o755); err != nil {
				return internal(p, err)
			}
			x.kinds[p] = xImplicitDir
		default:
			return invalid(rel, "entry %q is inside %q, which is not a directory", rel, p)
		}
	}
	return nil
}

func (x *extractor) path(rel string) string {
	return filepath.Join(x.dest, filepath.FromSlash(rel))
}

// entry checks one tar entry and creates what it names under dest.
func (x *extractor) entry(hdr *tar.Header, tr *tar.Reader) error {
	if hdr.Typeflag == tar.TypeXGlobalHeader {
		// pax global comments (git archive) create nothing, but count, so
		// a stream of them cannot run unbounded
		return x.count(hdr.Name)
	}
	rel, err := checkEntry(hdr, x.lim)
	if err != nil || rel == "" {
		return err // "": "./", the root itself
	}
	if err := x.parents(rel); err != nil {
		return err
	}
	prev := x.kinds[rel]
	if prev != 0 && !(prev == xImplicitDir && hdr.Typeflag == tar.TypeDir) {
		return invalid(rel, "duplicate entry %q", rel)
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		return x.dir(rel, prev)
	case tar.TypeSymlink:
		return x.symlink(rel, hdr.Linkname)
	case tar.TypeReg:
		return x.regular(rel, hdr, tr)
	}
	return nil
}

// checkEntry checks what an entry's header alone tells: its name, its type
// (directories, regular files and symlinks only), its path within lim and
// its mode bits. rel is its package path; "" is the root, a directory.
func checkEntry(hdr *tar.Header, lim *limits) (rel string, err error) {
	rel, err = cleanName(hdr.Name)
	if err != nil {
		return "", err
	}
	name := rel
	if name == "" {
		name = hdr.Name
	}
	if strings.ContainsRune(hdr.Name, 0) {
		return "", invalid(name, "entry %q contains a NUL byte", hdr.Name)
	}
	switch hdr.Typeflag {
	case tar.TypeDir, tar.TypeReg, tar.TypeSymlink:
	case tar.TypeLink:
		return "", invalid(name, "hard link %q is not allowed", name)
	case tar.TypeChar, tar.TypeBlock:
		return "", invalid(name, "device file %q is not allowed", name)
	case tar.TypeFifo:
		return "", invalid(name, "fifo %q is not allowed", name)
	default:
		return "", invalid(name, "entry %q has unsupported type %q", name, string(rune(hdr.Typeflag)))
	}
	if rel == "" {
		if hdr.Typeflag != tar.TypeDir {
			return "", invalid(hdr.Name, "entry %q is not a valid path", hdr.Name)
		}
		return "", nil
	}
	if err := checkRel(rel, lim); err != nil {
		return "", err
	}
	if hdr.Typeflag != tar.TypeDir {
		if err := checkModeBits(rel, hdr.FileInfo().Mode()); err != nil {
			return "", err
		}
	}
	return rel, nil
}

// dir makes directory rel, unless a deeper entry already made it (prev).
func (x *extractor) dir(rel string, prev xkind) error {
	if prev == 0 {
		if err := x.count(rel); err != nil {
			return err
		}
		if err := os.Mkdir(x.path(rel), 0o755); err != nil {
			return internal(rel, err)
		}
	}
	x.kinds[rel] = xDir
	return nil
}

// symlink makes rel a symlink to target, which must stay in the package.
func (x *extractor) symlink(rel, target string) error {
	if err := checkLinkTarget(rel, target, x.lim); err != nil {
		return err
	}
	if err := x.count(rel); err != nil {
		return err
	}
	if err := os.Symlink(target, x.path(rel)); err != nil {
		return internal(rel, err)
	}
	x.kinds[rel] = xLink
	return nil
}

// regular writes regular file rel from tr.
func (x *extractor) regular(rel string, hdr *tar.Header, tr *tar.Reader) error {
	if err := x.count(rel); err != nil {
		return err
	}
	if hdr.Size > x.lim.fileBytes {
		return invalid(rel, "file %q is larger than %d bytes", rel, x.lim.fileBytes)
	}
	x.kinds[rel] = xFile
	return x.file(rel, hdr, tr)
}

func (x *extractor) file(rel string, hdr *tar.Header, tr *tar.Reader) error {
	perm := os.FileMode(0o644)
	if hdr.Mode&0o100 != 0 {
		perm = 0o755
	}
	f, err := os.OpenFile(x.path(rel), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return internal(rel, err)
	}
	// Count what is actually read: never trust hdr.Size for a limit.
	max := min(x.lim.fileBytes, x.lim.packageBytes-x.total)
	n, err := io.Copy(f, io.LimitReader(tr, max+1))
	if cerr := f.Close(); err == nil && cerr != nil {
		return internal(rel, cerr)
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return internal(rel, err)
		}
		return x.archiveError(err)
	}
	if n > max {
		if n > x.lim.fileBytes {
			return invalid(rel, "file %q is larger than %d bytes", rel, x.lim.fileBytes)
		}
		return invalid("", "package is larger than %d bytes", x.lim.packageBytes)
	}
	x.total += n
	return nil
}
