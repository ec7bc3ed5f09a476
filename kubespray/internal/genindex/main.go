// Command genindex writes the release index of the bundled kubespray
// catalogues (kubespray.ReleaseIndex): run by go generate after the
// catalogues are generated, from the catalogues themselves.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/layercheck/layercheck/kubespray"
)

func main() {
	out := flag.String("out", "releases_index.json.gz", "file to write")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "genindex:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	cats := map[string]*kubespray.Catalogue{}
	for _, v := range kubespray.Versions() {
		c, err := kubespray.Bundled(v)
		if err != nil {
			return err
		}
		cats[v] = c
	}
	b, err := json.Marshal(kubespray.BuildIndex(cats))
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(b); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}
