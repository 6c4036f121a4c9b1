package policy

import (
	"fmt"
	"sync/atomic"
)

// Holder holds the policy in force and swaps it on reload; it is safe for
// concurrent use. The zero value holds no policy (everything is asked).
type Holder struct {
	file string
	p    atomic.Pointer[Policy]
}

// NewHolder returns a Holder of p, which Reload re-reads from file.
func NewHolder(file string, p *Policy) *Holder {
	h := &Holder{file: file}
	h.p.Store(p)
	return h
}

// Policy is the policy in force (nil: none).
func (h *Holder) Policy() *Policy {
	if h == nil {
		return nil
	}
	return h.p.Load()
}

// File is the policy file Reload reads.
func (h *Holder) File() string { return h.file }

// Reload reads the file again. A file that does not validate changes
// nothing: the policy in force stays, and the error names the line.
func (h *Holder) Reload() (*Policy, error) {
	if h.file == "" {
		return nil, fmt.Errorf("no policy file to reload")
	}
	p, err := Load(h.file)
	if err != nil {
		return nil, err
	}
	h.p.Store(p)
	return p, nil
}
