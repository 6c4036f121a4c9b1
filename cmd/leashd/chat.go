package main

import (
	"context"
	"errors"
	"io"

	"github.com/leashd/leashd/config"
)

// runChat is `leashd chat` (the terminal connector, issue 9).
func runChat(ctx context.Context, cfg config.Config, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return errors.New("leashd chat is not available in this build yet")
}
