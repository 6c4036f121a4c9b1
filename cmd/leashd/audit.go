package main

import (
	"context"
	"errors"
	"io"

	"github.com/leashd/leashd/config"
)

// runAudit is `leashd audit` (the audit log, issue 7).
func runAudit(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer) error {
	return errors.New("leashd audit is not available in this build yet")
}
