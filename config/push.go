package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// VAPIDFileName is the file in the state directory holding the web push
// keys (VAPID) leashd generated at its first start.
const VAPIDFileName = "vapid-keys.json"

// VAPIDFile is where leashd keeps its web push keys.
func (c Config) VAPIDFile() string { return filepath.Join(c.StateDir(), VAPIDFileName) }

// Push is how the web page's push notifications reach phones: its
// variables are LEASHD_PUSH_* (the section "push", PushSection).
type Push struct {
	ExtraHosts string `split_words:"true" desc:"Push services' hosts leashd may send web pushes to besides the known ones (fcm.googleapis.com, updates.push.services.mozilla.com, *.push.apple.com, *.notify.windows.com, web.push.apple.com), comma-separated, e.g. push.example.org or *.example.org for a self-hosted service; no other host is ever contacted"`
	Subscriber string `desc:"Who push services may contact about leashd's pushes (the VAPID subject): an https URL or an e-mail address; default: leashd's project page"`
}

// PushSection is how the push settings are read: LEASHD_PUSH_*.
func PushSection(p *Push) Section { return Section{Name: "push", Settings: p} }

// Hosts are LEASHD_PUSH_EXTRA_HOSTS, one a host.
func (p Push) Hosts() []string {
	var out []string
	for _, h := range strings.FieldsFunc(p.ExtraHosts, func(r rune) bool { return r == ',' || r == ' ' || r == ';' || r == '\n' }) {
		out = append(out, strings.ToLower(h))
	}
	return out
}

// Validate checks the extra hosts (host names, "*.domain" or IP
// addresses, no scheme, port or path) and the subscriber.
func (p Push) Validate() error {
	for _, h := range p.Hosts() {
		name := strings.TrimPrefix(h, "*.")
		if net.ParseIP(name) != nil {
			continue
		}
		if name == "" || strings.ContainsAny(name, "/:@?#*") || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") {
			return fmt.Errorf("%s_PUSH_EXTRA_HOSTS: %q is not a host name: give names like push.example.org or *.example.org, no scheme, port or path", Prefix, h)
		}
	}
	s := p.Subscriber
	if s != "" && !strings.HasPrefix(s, "https://") && !strings.HasPrefix(s, "mailto:") && !strings.Contains(s, "@") {
		return fmt.Errorf("%s_PUSH_SUBSCRIBER=%q: give an https URL or an e-mail address", Prefix, s)
	}
	return nil
}

// vapidKeys is the VAPID key file's content.
type vapidKeys struct {
	Public  string `json:"public_key"`
	Private string `json:"private_key"`
}

// VAPIDKeys returns the web push keys kept in the state directory,
// making them with generate (mode 0600, written atomically) at first
// start. A key file others may read or write, or one that cannot be read,
// is refused with the fix.
func (c Config) VAPIDKeys(generate func() (private, public string, err error)) (private, public string, err error) {
	path := c.VAPIDFile()
	for range 2 {
		b, err := os.ReadFile(path)
		if err == nil {
			return readVAPID(path, b)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", "", fmt.Errorf("web push keys %s: %w", path, err)
		}
		priv, pub, err := generate()
		if err != nil {
			return "", "", fmt.Errorf("making web push keys: %w", err)
		}
		out, _ := json.Marshal(vapidKeys{Public: pub, Private: priv})
		switch err := writeNew(path, string(out)+"\n"); {
		case errors.Is(err, fs.ErrExist): // another leashd made them meanwhile: read those
			continue
		case err != nil:
			return "", "", fmt.Errorf("writing web push keys to %s: %w (make the state directory writable by the user leashd runs as)", path, err)
		}
		return priv, pub, nil
	}
	return "", "", fmt.Errorf("web push keys %s: made and gone again", path)
}

func readVAPID(path string, b []byte) (private, public string, err error) {
	if fi, err := os.Stat(path); err == nil && runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return "", "", fmt.Errorf("web push keys %s are open to other users (mode %04o): whoever read them can send pushes as leashd. Fix: chmod 600 %s, or delete it (browsers then subscribe again)", path, fi.Mode().Perm(), path)
	}
	var k vapidKeys
	if err := json.Unmarshal(b, &k); err != nil || k.Public == "" || k.Private == "" {
		return "", "", fmt.Errorf("web push keys %s are unreadable; delete the file and leashd makes new ones (browsers then subscribe again)", path)
	}
	return k.Private, k.Public, nil
}
