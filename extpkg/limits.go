package extpkg

// Limits on a package. Every one is enforced by counting what is actually
// read or created, never by trusting an archive header; going over a limit
// is an error, never a truncated package.
const (
	// MaxFiles bounds the entries of a package: regular files, symlinks and
	// directories together.
	MaxFiles = 4096
	// MaxFileBytes bounds one regular file.
	MaxFileBytes = 64 << 20
	// MaxPackageBytes bounds the sum of all regular files (uncompressed).
	MaxPackageBytes = 256 << 20
	// MaxArchiveBytes bounds a .tar.gz as read from disk (compressed).
	MaxArchiveBytes = 128 << 20
	// MaxPathDepth bounds the number of path elements of an entry
	// ("bin/tool" has 2).
	MaxPathDepth = 32
	// MaxPathBytes bounds an entry's slash-separated path and a symlink's
	// target text.
	MaxPathBytes = 1024
	// MaxNameBytes bounds one path element.
	MaxNameBytes = 255
	// MaxManifestBytes bounds rukh-extension.json.
	MaxManifestBytes = 4 << 20
	// MaxSignatureBytes bounds rukh-extension.sig.
	MaxSignatureBytes = 4 << 10
	// maxSymlinkHops bounds a chain of in-package symlinks.
	maxSymlinkHops = 16
	// maxTrailingBytes bounds decompressed data after the end of the tar
	// stream (tar pads to a record; anything much longer is not a tar).
	maxTrailingBytes = 1 << 20
)

// limits is the set Load applies; tests lower it instead of writing
// 64 MiB files.
type limits struct {
	files        int
	fileBytes    int64
	packageBytes int64
	archiveBytes int64
	pathDepth    int
	pathBytes    int
}

var defaultLimits = limits{
	files:        MaxFiles,
	fileBytes:    MaxFileBytes,
	packageBytes: MaxPackageBytes,
	archiveBytes: MaxArchiveBytes,
	pathDepth:    MaxPathDepth,
	pathBytes:    MaxPathBytes,
}
