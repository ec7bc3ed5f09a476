package sshconn

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// A fleet's hosts usually share one private key and one known_hosts file,
// and each dial read and parsed both again: an RSA key's parse (with its
// validation) took about 4 ms and a known_hosts of 100 machines' three
// keys about 1 ms, per host, on a 2-core machine, where a host's whole
// check is a few tens of milliseconds. The parses are kept for the
// process, each under its files' paths, sizes and modification times, so
// a changed file (a key added by accept-new) is read again. The first
// dials of a fleet start together: one of them parses, the others wait
// for it.

type parsed struct {
	once sync.Once
	v    any
	err  error
}

var parsedFiles sync.Map // stamp -> *parsed

// stamp names files by path, size and modification time; ok is false
// when one cannot be stat'ed (the caller then reads it uncached and
// reports what reading says).
func stamp(kind string, files []string) (string, bool) {
	var b strings.Builder
	b.WriteString(kind)
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil || !fi.Mode().IsRegular() {
			return "", false
		}
		fmt.Fprintf(&b, "\x00%s\x00%d\x00%d", f, fi.Size(), fi.ModTime().UnixNano())
	}
	return b.String(), true
}

// cachedParse returns parse's result for files, parsed once while the
// files stay as they are.
func cachedParse[T any](kind string, files []string, parse func() (T, error)) (T, error) {
	key, ok := stamp(kind, files)
	if !ok {
		return parse()
	}
	e, _ := parsedFiles.LoadOrStore(key, &parsed{})
	p := e.(*parsed)
	p.once.Do(func() { p.v, p.err = parse() })
	v, _ := p.v.(T)
	return v, p.err
}

// keyFile is a private key file read and parsed.
type keyFile struct {
	signer ssh.Signer
	// readErr is os.ReadFile's error, parseErr ssh.ParsePrivateKey's.
	readErr, parseErr error
}

func readKeyFile(f string) keyFile {
	k, _ := cachedParse("key", []string{f}, func() (keyFile, error) {
		data, err := os.ReadFile(f)
		if err != nil {
			return keyFile{readErr: err}, nil
		}
		s, err := ssh.ParsePrivateKey(data)
		return keyFile{signer: s, parseErr: err}, nil
	})
	return k
}

// knownHosts is knownhosts.New(files...), kept while the files stay as
// they are.
func knownHosts(files []string) (ssh.HostKeyCallback, error) {
	return cachedParse("known_hosts", files, func() (ssh.HostKeyCallback, error) {
		return knownhosts.New(files...)
	})
}
