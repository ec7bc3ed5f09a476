// Package filekind names the kinds of file that are not regular files, for
// the errors every reader gives when a path it expected to be a file is a
// FIFO, a device or a directory ("is a FIFO, not a file"). Reading such a
// path could block forever (a FIFO) or never end (/dev/zero).
package filekind

import "io/fs"

// Of names a file mode that is not a regular file: "FIFO", "socket",
// "character device", "block device", "directory", else "irregular file".
func Of(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m.IsDir():
		return "directory"
	}
	return "irregular file"
}
