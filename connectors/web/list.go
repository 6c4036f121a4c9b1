package web

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leashd/leashd/interactions"
)

// GET /api/interactions lists what is pending, oldest first (issue #30:
// 40,000 pending requests made one answer too large to build). With
// ?limit=N (1 to maxPageSize) or ?cursor=C it answers one page,
// {"interactions":[…],"next":"C"}, next absent on the last page;
// without them it answers the whole list as a bare array, as it always
// did, which the caps on pending requests (LEASHD_API_MAX_PENDING) bound.
const (
	defaultPageSize = 100
	maxPageSize     = 1000
)

// interactionPage is the body of a paged GET /api/interactions.
type interactionPage struct {
	Interactions []interactionView `json:"interactions"`
	Next         string            `json:"next,omitempty"`
}

// pageArgs are ?limit and ?cursor; paged is false without either.
type pageArgs struct {
	paged bool
	limit int
	after time.Time
	id    string
}

// parsePageArgs reads ?limit and ?cursor; the error names what is
// accepted.
func parsePageArgs(r *http.Request) (pageArgs, error) {
	q := r.URL.Query()
	p := pageArgs{limit: defaultPageSize}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxPageSize {
			return p, fmt.Errorf("limit: %s is not a page size from 1 to %d", quoteShort(s), maxPageSize)
		}
		p.paged, p.limit = true, n
	}
	if s := q.Get("cursor"); s != "" {
		b, err := base64.RawURLEncoding.DecodeString(s)
		ns, id, ok := strings.Cut(string(b), ".")
		n, nerr := strconv.ParseInt(ns, 10, 64)
		if err != nil || !ok || nerr != nil || id == "" {
			return p, fmt.Errorf("cursor: %s is not a cursor: give the next of the page before, unchanged", quoteShort(s))
		}
		p.paged, p.after, p.id = true, time.Unix(0, n), id
	}
	return p, nil
}

// cursorOf is the cursor that lists what comes after it.
func cursorOf(it interactions.Interaction) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(it.AskedAt.UnixNano(), 10) + "." + it.ID))
}

// order sorts by when asked, then by ID: the order pages follow.
func order(a, b interactions.Interaction) int {
	if c := a.AskedAt.Compare(b.AskedAt); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// page cuts its (in order) to the page p asks for, and returns the next
// cursor ("" on the last page).
func (p pageArgs) page(its []interactions.Interaction) ([]interactions.Interaction, string) {
	if !p.paged {
		return its, ""
	}
	if p.id != "" {
		from := interactions.Interaction{AskedAt: p.after, ID: p.id}
		i, _ := slices.BinarySearchFunc(its, from, order)
		for i < len(its) && order(its[i], from) <= 0 {
			i++
		}
		its = its[i:]
	}
	if len(its) <= p.limit {
		return its, ""
	}
	return its[:p.limit], cursorOf(its[p.limit-1])
}

func (c *Connector) listInteractions(w http.ResponseWriter, r *http.Request) {
	h, ok := c.h(w)
	if !ok {
		return
	}
	chat := r.URL.Query().Get("chat")
	if chat != "" {
		if err := validChatID(chat); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	pa, err := parsePageArgs(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	cred := credential(r)
	its := h.Pending(chat)
	if !cred.page { // a program's own requests, and those of the chats it answers in
		its = slices.DeleteFunc(its, func(it interactions.Interaction) bool { return !cred.MaySee(it) })
	}
	c.mu.Lock()
	for _, in := range c.interrupted {
		// Normally pending again (the engine restores it at start-up):
		// listed once.
		restored := slices.ContainsFunc(its, func(p interactions.Interaction) bool { return p.ID == in.it.ID })
		if !restored && (chat == "" || in.it.ChatID == chat) && cred.MaySee(in.it) {
			its = append(its, in.it)
		}
	}
	slices.SortStableFunc(its, order)
	its, next := pa.page(its)
	src, _ := h.(selectionSource)
	out := make([]interactionView, 0, len(its))
	for _, it := range its {
		v := c.viewLocked(it)
		if src != nil && it.MultiSelect {
			// The coordinator's selection: right after a restart it holds
			// the journaled one before any event has reached the page.
			if sel := src.Selected(it.ID); sel != nil {
				v.Selected = sel
			}
		}
		out = append(out, v)
	}
	c.mu.Unlock()
	if pa.paged {
		writeJSON(w, http.StatusOK, interactionPage{Interactions: out, Next: next})
		return
	}
	writeJSON(w, http.StatusOK, out)
}
