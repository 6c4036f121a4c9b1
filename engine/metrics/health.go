package metrics

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/leashd/leashd/connectors"
)

// Healthz answers 200 {"status":"ok"} while the process serves HTTP: the
// liveness probe.
func Healthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowProbe(w, r) {
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}

// Check is one readiness condition: Ready returns nil when it holds, else
// an error saying what is wrong (shown on /readyz; keep secrets out of it).
type Check struct {
	Name  string
	Ready func() error
}

// CheckTimeout bounds each readiness check: a check still running after it
// counts as failed.
const CheckTimeout = 3 * time.Second

// CheckResult is one check's line in the /readyz body.
type CheckResult struct {
	Name  string `json:"name"`
	Ready bool   `json:"ready"`
	Error string `json:"error,omitempty"`
}

// Readiness is the /readyz body.
type Readiness struct {
	Ready  bool          `json:"ready"`
	Checks []CheckResult `json:"checks"`
}

// Readyz runs every check (concurrently, each bounded by CheckTimeout) and
// answers 200 when all are ready, else 503, with a JSON body listing each
// check: the readiness probe.
func Readyz(checks ...Check) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowProbe(w, r) {
			return
		}
		body := RunChecks(checks...)
		code := http.StatusOK
		if !body.Ready {
			code = http.StatusServiceUnavailable
		}
		writeJSON(w, code, body)
	})
}

// RunChecks runs the checks as Readyz does.
func RunChecks(checks ...Check) Readiness {
	out := Readiness{Ready: true, Checks: make([]CheckResult, len(checks))}
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Go(func() { out.Checks[i] = run(c) })
	}
	wg.Wait()
	for _, c := range out.Checks {
		out.Ready = out.Ready && c.Ready
	}
	return out
}

func run(c Check) CheckResult {
	res := CheckResult{Name: c.Name}
	if c.Ready == nil {
		res.Error = "no check function"
		return res
	}
	errc := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				errc <- fmt.Errorf("check panicked: %v", p)
			}
		}()
		errc <- c.Ready()
	}()
	t := time.NewTimer(CheckTimeout)
	defer t.Stop()
	select {
	case err := <-errc:
		if err != nil {
			res.Error = err.Error()
		} else {
			res.Ready = true
		}
	case <-t.C:
		res.Error = fmt.Sprintf("no answer within %s", CheckTimeout)
	}
	return res
}

// ConnectorChecks returns a check for each connector that can say whether
// it is connected (connectors.Readier), named after the connector.
func ConnectorChecks(cs ...connectors.Connector) []Check {
	var out []Check
	for _, c := range cs {
		if r, ok := c.(connectors.Readier); ok {
			out = append(out, Check{Name: c.Name(), Ready: r.Ready})
		}
	}
	return out
}

func allowProbe(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	http.Error(w, fmt.Sprintf("method %s not allowed: use GET or HEAD", r.Method), http.StatusMethodNotAllowed)
	return false
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v) // the client went away: nothing to do
}

// Mount serves /healthz, /readyz (with checks) and /metrics on mux.
func (m *Metrics) Mount(mux *http.ServeMux, checks ...Check) {
	mux.Handle("/healthz", Healthz())
	mux.Handle("/readyz", Readyz(checks...))
	mux.Handle("/metrics", m.Handler())
}
