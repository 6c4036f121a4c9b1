// Package deploy holds leashd's deployment files (Dockerfile, compose.yaml,
// the systemd unit, Kubernetes manifests, leashd.env.example) and the tests
// that check them against the code: `go test ./deploy` (add -update to
// regenerate leashd.env.example from config.Config).
package deploy
