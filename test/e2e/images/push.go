package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// pushOptions is one `images push`.
type pushOptions struct {
	registry string // host:port, plain HTTP
	buildDir string
	rootfs   string
	userland userland
	specs    []spec
	out, log io.Writer
}

// registryTransport bounds every step of a request to the registry; the
// whole push is bounded by its context.
func registryTransport() http.RoundTripper {
	return &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		ResponseHeaderTimeout: 2 * time.Minute,
		IdleConnTimeout:       30 * time.Second,
		MaxIdleConnsPerHost:   4,
	}
}

// push assembles and pushes every image of o.specs whose binary exists. An
// image whose tag already names the same digest is left alone.
func push(ctx context.Context, o pushOptions) error {
	base, err := newLayers(o.rootfs, o.userland)
	if err != nil {
		return err
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithTransport(registryTransport())}
	for _, s := range o.specs {
		ref, err := name.NewTag(s.ref(o.registry), name.Insecure)
		if err != nil {
			return fmt.Errorf("%s: %w", s.ref(o.registry), err)
		}
		if why := s.missing(o.buildDir); why != "" {
			fmt.Fprintf(o.log, "skip %s: %s\n", ref, why)
			continue
		}
		img, err := assemble(s, o.buildDir, base)
		if err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		dig, err := img.Digest()
		if err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		size, err := imageSize(img)
		if err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		have, err := remote.Head(ref, opts...)
		switch {
		case err == nil && have.Digest == dig:
			fmt.Fprintf(o.out, "unchanged %s@%s %s\n", ref, dig, mib(size))
			continue
		case err != nil && !notFound(err):
			return fmt.Errorf("%s: %w", ref, err)
		}
		if err := remote.Write(ref, img, opts...); err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		fmt.Fprintf(o.out, "pushed %s@%s %s\n", ref, dig, mib(size))
	}
	return nil
}

func notFound(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) && te.StatusCode == http.StatusNotFound
}

// imageSize is what a pull downloads: the compressed layers and config.
func imageSize(img v1.Image) (int64, error) {
	m, err := img.Manifest()
	if err != nil {
		return 0, err
	}
	n := m.Config.Size
	for _, l := range m.Layers {
		n += l.Size
	}
	return n, nil
}

func mib(n int64) string { return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20)) }
