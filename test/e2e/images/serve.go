package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
	"github.com/sirupsen/logrus"
)

// registryHandler is distribution's registry application on the filesystem
// driver under root: no auth, no redirects, no upload purging (the
// process lives as long as one e2e run).
func registryHandler(ctx context.Context, root string) (h http.Handler, err error) {
	secret := make([]byte, 16)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	cfg := &configuration.Configuration{
		Version: "0.1",
		Storage: configuration.Storage{
			"filesystem":  configuration.Parameters{"rootdirectory": root},
			"delete":      configuration.Parameters{"enabled": false},
			"redirect":    configuration.Parameters{"disable": true},
			"maintenance": configuration.Parameters{"uploadpurging": map[any]any{"enabled": false}},
		},
	}
	cfg.HTTP.Secret = hex.EncodeToString(secret)
	// Parse sets this default; a literal Configuration must, or the
	// catalogue lists nothing.
	cfg.Catalog.MaxEntries = 1000
	// distribution logs every request through logrus: keep server errors.
	logrus.SetLevel(logrus.WarnLevel)
	logrus.SetFormatter(serverErrors{logrus.StandardLogger().Formatter})
	// NewApp panics when the storage driver cannot start.
	defer func() {
		if r := recover(); r != nil {
			h, err = nil, fmt.Errorf("registry on %s: %v", root, r)
		}
	}()
	return handlers.NewApp(ctx, cfg), nil
}

// serverErrors drops distribution's "response completed with error" lines
// for 4xx answers: a push asks for every blob and tag before it has them.
type serverErrors struct{ logrus.Formatter }

func (f serverErrors) Format(e *logrus.Entry) ([]byte, error) {
	if s, err := strconv.Atoi(fmt.Sprint(e.Data["http.response.status"])); err == nil && s < 500 {
		return nil, nil
	}
	return f.Formatter.Format(e)
}

// newServer serves h with a bound on every phase of a request.
func newServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		// A layer upload is one request: minutes, not forever.
		ReadTimeout:  10 * time.Minute,
		WriteTimeout: 10 * time.Minute,
		IdleTimeout:  2 * time.Minute,
	}
}

// serve runs srv on ln until ctx ends, then drains for up to 10 s.
func serve(ctx context.Context, srv *http.Server, ln net.Listener, log io.Writer) error {
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err // never http.ErrServerClosed: only Shutdown below closes it
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fmt.Fprintln(log, "registry: shutting down")
	return srv.Shutdown(sctx)
}
