package devidp

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"strings"
)

//go:embed templates/page.html
var templateFS embed.FS

// page is the picker and message page. It has no inline script or style,
// so it renders under Warden's strict Content-Security-Policy.
var page = template.Must(template.New("page.html").
	Funcs(template.FuncMap{"join": strings.Join}).
	ParseFS(templateFS, "templates/page.html"))

// pageData feeds templates/page.html: the user list when Users is set,
// otherwise Message.
type pageData struct {
	Title         string
	Message       string
	Action        string
	AuthRequestID string
	Users         []User
}

const maxFormBytes = 64 << 10

const unknownRequestMessage = "This sign-in request is unknown, already finished or expired " +
	"(requests last five minutes). Go back to Warden and sign in again."

// showPicker lists the users for a pending auth request. The op redirects
// here from /authorize with ?authRequestID=.
func (p *Provider) showPicker(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("authRequestID")
	if _, err := p.store.pendingAuthRequest(id); err != nil {
		p.render(w, r, http.StatusBadRequest, pageData{Title: "Sign-in request not found", Message: unknownRequestMessage})
		return
	}
	p.render(w, r, http.StatusOK, pageData{
		Title:         "Sign in as",
		Action:        p.prefix + loginPath,
		AuthRequestID: id,
		Users:         p.store.users,
	})
}

// choose completes the auth request with the chosen user and sends the
// browser to the op's callback, which issues the code and redirects to the
// client. There is no CSRF token: the auth request id is an unguessable
// 128-bit value that only the browser which started the login was given,
// and it is accepted once, while pending.
func (p *Provider) choose(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		p.render(w, r, http.StatusBadRequest, pageData{Title: "Bad request", Message: "The form could not be read."})
		return
	}
	// Only the offered names get a budget of their own, so made-up names
	// cannot grow the limiter.
	name := r.PostForm.Get("username")
	if _, known := p.store.userByUsername(name); !known {
		name = ""
	}
	if ok, retry := p.attempts.allow(remoteAddr(r), name, p.store.now()); !ok {
		p.tooMany(w, r, retry)
		return
	}
	id := r.PostForm.Get("authRequestID")
	user, ok := p.store.userByUsername(r.PostForm.Get("username"))
	if !ok {
		p.render(w, r, http.StatusBadRequest, pageData{Title: "Unknown user", Message: "That user is not offered by this provider."})
		return
	}
	if err := p.store.completeAuthRequest(id, user.Subject); err != nil {
		p.render(w, r, http.StatusBadRequest, pageData{Title: "Sign-in request not found", Message: unknownRequestMessage})
		return
	}
	p.log.InfoContext(r.Context(), "devidp: demo user chosen", "subject", user.Subject)
	http.Redirect(w, r, p.callbackURL(r.Context(), id), http.StatusSeeOther)
}

// showLoggedOut is where end_session lands when no post-logout redirect
// URI is registered or requested.
func (p *Provider) showLoggedOut(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	p.render(w, r, http.StatusOK, pageData{Title: "Signed out", Message: "You are signed out. Go back to Warden to sign in again."})
}

// render executes into a buffer first, so a template failure is a clean 500.
func (p *Provider) render(w http.ResponseWriter, r *http.Request, status int, data pageData) {
	var buf bytes.Buffer
	if err := page.ExecuteTemplate(&buf, "page", data); err != nil {
		p.log.ErrorContext(r.Context(), "devidp: render page", "error", err)
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}
