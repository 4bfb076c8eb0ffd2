// Package extpkg owns Rukh's extension packages on disk: loading a package
// directory or .tar.gz with every hostile-input check applied, its h1:
// content digest, publisher keys and signatures (ed25519), deterministic
// packing, and the immutable, content-addressed installed copy.
//
// # Package shape
//
// A package is a directory with rukh-extension.json at its root. A .tar.gz
// holds the same entries either at its root or under one top-level
// directory. Only directories, regular files and relative symlinks that
// resolve to a regular file inside the package are allowed; everything else
// (devices, fifos, sockets, hard links, setuid/setgid/sticky files, absolute
// or escaping paths and links, duplicates) is refused with a *kernel.Error
// of code invalid whose Path names the entry. See the Max* constants for the
// size limits.
//
// # Digest
//
// The digest is a golang.org/x/mod/sumdb/dirhash Hash1 ("h1:") over every
// regular file except rukh-extension.sig, named by its slash-separated path
// relative to the package root. Because dirhash sees only names and
// contents, two synthetic entries carry what it would miss; their names
// start with "/", which no package path can:
//
//   - "/rukh/executable": the sorted paths of regular files whose owner
//     execute bit is set, one per line;
//   - "/rukh/symlinks": one line per symlink, "path NUL target".
//
// Each is present only when non-empty, so a package without executables or
// symlinks has exactly the plain dirhash of its files. Directories, other
// mode bits, owners and times are not part of the digest.
//
// # Installed copies
//
// Install copies a loaded package into releasesDir/h1-<hex> (see
// ReleaseDirName) through a temporary directory and a rename, re-checks the
// digest of the copy, and leaves files 0444 (0555 when executable) and
// directories 0555. The signature file is not copied: an installed copy holds
// exactly what its digest covers.
//
// Install also records the copy's fingerprint beside it (.fp-h1-<hex>):
// device, inode, mode, size, ctime and mtime of every entry. VerifyCopy, run
// before each call, compares it with lstat alone (cheap enough for every
// call: docs/performance.md), and falls back to the full digest only when it
// differs or is missing; see VerifyCopy for what then runs and what is
// refused.
//
// extpkg imports kernel and no other rukh package. It never exits, never
// reads os.Args and never writes os.Stdout.
package extpkg
