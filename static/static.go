// Package static embeds the console's CSS and the little JavaScript it
// needs, so the binary serves them without files on disk.
package static

import (
	"embed"
	"net/http"
)

//go:embed app.css favicon.svg queue.js copy.js signout.js menu.js
var files embed.FS

// Handler serves the embedded files. Responses may be cached for an hour.
func Handler() http.Handler {
	fs := http.FileServerFS(files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		fs.ServeHTTP(w, r)
	})
}
