package main

import (
	"context"
	"fmt"
	"io"

	"github.com/leashd/leashd/config"
)

// serve runs leashd until ctx is done.
func serve(ctx context.Context, cfg config.Config, stdout, stderr io.Writer) error {
	fmt.Fprintf(stdout, "leashd would serve the web page on http://%s\n", cfg.WebAddr)
	return nil
}
