package parser

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"

	"github.com/layercheck/layercheck/parser/filekind"
)

// MaxFileBytes is the most bytes read from one file (an inventory source,
// a group_vars/host_vars file, an -e @file, ansible.cfg): 64 MiB by
// default, LAYERCHECK_MAX_FILE_BYTES when set to a positive integer. No real
// kubespray inventory file comes near it; a larger file is an error naming
// it, so a runaway file (or /dev/zero behind a link) cannot exhaust memory.
var MaxFileBytes int64 = envLimit("LAYERCHECK_MAX_FILE_BYTES", 64<<20)

// MaxInventoryBytes is the most bytes read from all the files of one Load
// (sources, group_vars and host_vars together): 256 MiB by default,
// LAYERCHECK_MAX_INVENTORY_BYTES when set.
var MaxInventoryBytes int64 = envLimit("LAYERCHECK_MAX_INVENTORY_BYTES", 256<<20)

// MaxHosts is the most hosts one Load may hold after host ranges
// (web[01:99]) are expanded: 1,000,000 by default, LAYERCHECK_MAX_HOSTS when
// set. ansible-core has no bound; 30 lines of rN-[0:99999] would otherwise
// make 3 million hosts and gigabytes of memory.
var MaxHosts = int(envLimit("LAYERCHECK_MAX_HOSTS", 1_000_000))

func envLimit(name string, def int64) int64 {
	if v, ok := os.LookupEnv(name); ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return def
}

// FileKindError is a path that is not a regular file where one is read: a
// FIFO, socket or device would block the read or never end.
type FileKindError struct {
	Path string
	Kind string // "FIFO", "socket", "character device", "block device", "directory", "irregular file"
}

func (e *FileKindError) Error() string {
	return fmt.Sprintf("%s: is a %s, not a file", e.Path, e.Kind)
}

// FileSizeError is a file larger than the limit.
type FileSizeError struct {
	Path  string
	Limit int64
	What  string // "file" or "inventory"
}

func (e *FileSizeError) Error() string {
	if e.What == "inventory" {
		return fmt.Sprintf("%s: the inventory's files exceed %d bytes in all (set LAYERCHECK_MAX_INVENTORY_BYTES to allow more)", e.Path, e.Limit)
	}
	return fmt.Sprintf("%s: larger than %d bytes (set LAYERCHECK_MAX_FILE_BYTES to allow more)", e.Path, e.Limit)
}

// CheckRegular returns a *FileKindError when path (links followed) exists
// and is not a regular file, the stat error when it cannot be read, else nil.
func CheckRegular(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return &FileKindError{Path: path, Kind: filekind.Of(st.Mode())}
	}
	return nil
}

// ReadFile reads a regular file of at most limit bytes (MaxFileBytes when
// limit <= 0). A FIFO, socket, device or directory is a *FileKindError
// without a blocking open (the file is opened non-blocking and checked
// again after the open); a larger file is a *FileSizeError. Other errors
// are os errors, which name the path.
func ReadFile(path string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = MaxFileBytes
	}
	if err := CheckRegular(path); err != nil {
		return nil, err
	}
	// O_NONBLOCK: a FIFO swapped in after the check must not block the open
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &FileKindError{Path: path, Kind: filekind.Of(st.Mode())}
	}
	if st.Size() > limit {
		return nil, &FileSizeError{Path: path, Limit: limit, What: "file"}
	}
	data, err := readAllSized(io.LimitReader(f, limit+1), min(st.Size(), limit)+1)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &FileSizeError{Path: path, Limit: limit, What: "file"}
	}
	return data, nil
}

// readAllSized is io.ReadAll starting with room for size bytes (the
// file's size, plus one to see the end): a file read in one piece rather
// than in a buffer grown from 512 bytes.
func readAllSized(r io.Reader, size int64) ([]byte, error) {
	b := make([]byte, 0, max(size, 64))
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // the file grew: room for more
		}
	}
}

// readCounted is ReadFile that also counts the bytes against the
// inventory's MaxInventoryBytes.
func (inv *Inventory) readCounted(path string) ([]byte, error) {
	data, err := ReadFile(path, 0)
	if err != nil {
		return nil, err
	}
	inv.bytesRead += int64(len(data))
	if inv.bytesRead > MaxInventoryBytes {
		return nil, &FileSizeError{Path: path, Limit: MaxInventoryBytes, What: "inventory"}
	}
	return data, nil
}

// isLimitError reports whether err is a size or host-count limit: those
// stop the whole load even inside a directory source.
func isLimitError(err error) bool {
	var se *FileSizeError
	var he *HostLimitError
	return errors.As(err, &se) || errors.As(err, &he)
}
