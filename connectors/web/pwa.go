package web

import (
	"embed"
	"net/http"
)

// pwaFiles make the page an installable app (manifest, icons) with a
// service worker that shows pushes.
//
//go:embed static/sw.js static/push.js static/manifest.webmanifest static/icon-192.png static/icon-512.png
var pwaFiles embed.FS

// mountPWA serves the app's files at the root (the service worker's scope
// is the folder it is served from: "/" covers the page) and the push API.
// The files hold no secret: the manifest and the worker load before any
// token is given.
func (c *Connector) mountPWA(mux *http.ServeMux, api func(string, http.HandlerFunc)) {
	file := func(name, ctype, cache string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			b, err := pwaFiles.ReadFile("static/" + name)
			if err != nil {
				writeError(w, http.StatusInternalServerError, name+" is missing from the binary")
				return
			}
			h := w.Header()
			h.Set("Content-Type", ctype)
			h.Set("Cache-Control", cache)
			h.Set("X-Content-Type-Options", "nosniff")
			_, _ = w.Write(b)
		}
	}
	// The worker is checked for updates on every load; icons change
	// rarely.
	mux.HandleFunc("GET /sw.js", file("sw.js", "text/javascript; charset=utf-8", "no-cache"))
	mux.HandleFunc("GET /push.js", file("push.js", "text/javascript; charset=utf-8", "no-cache"))
	mux.HandleFunc("GET /manifest.webmanifest", file("manifest.webmanifest", "application/manifest+json", "no-cache"))
	mux.HandleFunc("GET /icon-192.png", file("icon-192.png", "image/png", "max-age=86400"))
	mux.HandleFunc("GET /icon-512.png", file("icon-512.png", "image/png", "max-age=86400"))
	api("GET /api/push", c.pageOnly(c.pushInfo))
	api("POST /api/push/subscriptions", c.pageOnly(c.subscribePush))
	api("POST /api/push/unsubscribe", c.pageOnly(c.unsubscribePush))
	api("POST /api/presence", c.pageOnly(c.presence))
}
