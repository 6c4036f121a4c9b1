package web

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzParseReply(f *testing.F) {
	for _, s := range []string{
		`{"answers":[["SQLite"]]}`, `{"answers":[["Auth","Billing"]]}`, `{"text":"DuckDB"}`,
		`{"answers":[["adjust"]],"text":"shorter"}`, `{"answers":[["a"],["b"]]}`, `{"answers":[[]]}`,
		`{"answer":"x"}`, `{"text":1}`, `{} {}`, ``, `null`, `[]`, `{"answers":null,"text":"  "}`,
		`{"answers":[["` + strings.Repeat("x", 100) + `"]]}`, "\xff", `{"text":"\u0000"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, status, err := parseReply(strings.NewReader(string(body)))
		if err != nil {
			if status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d for an error", status)
			}
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			if len(body) > maxBody && status != http.StatusRequestEntityTooLarge {
				t.Fatalf("%d-byte body not refused as too large", len(body))
			}
			return
		}
		if status != 0 {
			t.Fatalf("status %d without an error", status)
		}
		if r.By != webUser || r.Reject {
			t.Fatalf("reply %+v: wrong author or reject", r)
		}
		if len(r.Answers) == 0 && strings.TrimSpace(r.Text) == "" {
			t.Fatalf("accepted an empty reply from %q", body)
		}
		if len(body) > maxBody {
			t.Fatalf("accepted a %d-byte body", len(body))
		}
	})
}

func FuzzParseEventID(f *testing.F) {
	for _, s := range []string{"0", "12", "a1b2c3d4-17", "-1", "x-", "-", "a-b-3", " 5 ", "99999999999999999999", "", "deadbeef-18446744073709551615"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		boot, seq, err := parseEventID(s)
		if err != nil {
			if utf8.ValidString(s) && !strings.Contains(err.Error(), "event ID") {
				t.Fatalf("error %q does not say what was wrong", err)
			}
			return
		}
		// What parses renders back to the same position.
		again := strconv.FormatUint(seq, 10)
		if boot != "" {
			again = boot + "-" + again
		}
		b2, s2, err := parseEventID(again)
		if err != nil || b2 != boot || s2 != seq {
			t.Fatalf("%q parsed as (%q,%d) but %q parses as (%q,%d,%v)", s, boot, seq, again, b2, s2, err)
		}
	})
}

func FuzzValidChatID(f *testing.F) {
	for _, s := range []string{"web-abc", "telegram:42", "slack:C1:1700.1", "a b", "", "\x00", strings.Repeat("x", 201), "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := validChatID(s)
		if err == nil && (s == "" || len(s) > 200 || !utf8.ValidString(s) || strings.ContainsAny(s, " \n\r\t\x00")) {
			t.Fatalf("accepted %q", s)
		}
	})
}
