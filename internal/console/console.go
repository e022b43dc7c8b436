package console

import (
	"crypto/hmac"
	"crypto/sha256"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
)

//go:embed assets templates
var embedded embed.FS

// Options configure a console. Client and Token are required.
type Options struct {
	// Client is the blackboard the console reads (and decides on when
	// Writer is nil).
	Client *blackboard.Client
	// Writer, when set, is the blackboard the console's actions write
	// through (approvals, pause, resume, cancel, retry): `sett ui` reads
	// as the instance's read-only ACL user and writes as the people's
	// user. Nil writes through Client.
	Writer *blackboard.Client
	// Token is the access token every request must carry (at least 16
	// characters).
	Token string
	// ReadOnly hides every action and refuses every write.
	ReadOnly bool
	// BasePath is the sub-path the console is served under behind a
	// reverse proxy ("/sett"); "" serves it at the root. Every link and
	// asset honours it; the handler expects requests with the prefix.
	BasePath string
	// TrustedUserHeader, when set, names the header an authenticating
	// proxy puts the user name in ("X-Forwarded-User"); that name is
	// recorded as who decided or acted. Off ("") by default: set it only
	// when every request comes through that proxy.
	TrustedUserHeader string
	// Actor is who decides or acts when no trusted header names someone
	// (typically $USER of whoever ran `sett ui`).
	Actor string
	// Logger receives request errors; zero logs nothing.
	Logger zerolog.Logger
	// Now is the clock for ages; nil means time.Now.
	Now func() time.Time
}

// ErrOptions is returned by New for missing or bad options.
var ErrOptions = errors.New("console: bad options")

// Console serves the pages. It is safe for concurrent use.
type Console struct {
	o       Options
	bb      *blackboard.Client // reads
	wb      *blackboard.Client // actions
	base    string             // BasePath without trailing slash
	key     []byte             // HMAC key of sessions and CSRF tokens, derived from the token
	tmpl    *template.Template
	assets  http.Handler
	mux     *http.ServeMux
	csrfChk *http.CrossOriginProtection
	hub     *hub
	cache   *readCache
}

// New returns the console's http.Handler. Errors: ErrOptions.
func New(o Options) (*Console, error) {
	if o.Client == nil {
		return nil, errors.Join(ErrOptions, errors.New("console: Options.Client is nil"))
	}
	if len(o.Token) < 16 {
		return nil, errors.Join(ErrOptions, errors.New("console: the access token must be at least 16 characters (leave it empty in sett.yml to get a random one)"))
	}
	base := strings.TrimRight(o.BasePath, "/")
	if base != "" && (!strings.HasPrefix(base, "/") || strings.ContainsAny(base, "?#\"'<> ")) {
		return nil, errors.Join(ErrOptions, errors.New("console: the base path must start with / and hold no ?, #, quotes, <, > or spaces, e.g. /sett"))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	mac := hmac.New(sha256.New, []byte(o.Token))
	mac.Write([]byte("sett console session key"))
	wb := o.Writer
	if wb == nil {
		wb = o.Client
	}
	c := &Console{o: o, bb: o.Client, wb: wb, base: base, key: mac.Sum(nil), csrfChk: http.NewCrossOriginProtection()}
	c.cache = &readCache{}
	c.hub = &hub{bb: o.Client, cache: c.cache, warn: func(err error) { c.o.Logger.Warn().Err(err).Msg("console: read events") }}
	t, err := template.New("").Funcs(c.funcs()).ParseFS(embedded, "templates/*.html")
	if err != nil {
		return nil, err
	}
	c.tmpl = t
	sub, _ := fs.Sub(embedded, "assets")
	c.assets = http.StripPrefix("/static/", http.FileServerFS(sub))
	c.routes()
	return c, nil
}

func (c *Console) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", c.listPage)
	m.HandleFunc("GET /rows", c.listRows)
	m.HandleFunc("GET /events", c.events)
	m.HandleFunc("GET /w/{id}", c.workflowPage)
	m.HandleFunc("GET /w/{id}/diff", c.diffPage)
	m.HandleFunc("GET /a/{id}", c.artefactPage)
	m.HandleFunc("GET /approvals", c.approvalsPage)
	m.HandleFunc("GET /control", c.controlPage)
	m.Handle("GET /static/", c.assets)
	if !c.o.ReadOnly {
		m.HandleFunc("POST /approvals/decide", c.decide)
		m.HandleFunc("POST /control/pause", c.pause)
		m.HandleFunc("POST /control/resume", c.resume)
		m.HandleFunc("POST /w/{id}/cancel", c.cancel)
		m.HandleFunc("POST /claims/{id}/retry", c.retry)
	}
	c.mux = m
}

// ServeHTTP checks the path prefix, the token and (for writes) the origin
// and CSRF token, then serves the page.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	path := r.URL.Path
	if c.base != "" {
		if path == c.base {
			http.Redirect(w, r, c.base+"/"+queryOf(r), http.StatusFound)
			return
		}
		if !strings.HasPrefix(path, c.base+"/") {
			http.NotFound(w, r)
			return
		}
		path = strings.TrimPrefix(path, c.base)
	}
	sess, ok := c.authenticate(w, r)
	if !ok {
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if c.o.ReadOnly {
			http.Error(w, "403 forbidden: this console is read-only (sett ui --read-only)", http.StatusForbidden)
			return
		}
		if err := c.checkWrite(r, sess); err != nil {
			http.Error(w, "403 forbidden: "+err.Error(), http.StatusForbidden)
			return
		}
		// An action changes what the pages show: the page it redirects to
		// reads afresh (before the response leaves, the handler returns).
		defer c.cache.bump()
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = path
	r2.URL.RawPath = ""
	c.mux.ServeHTTP(w, r2.WithContext(withSession(r.Context(), sess)))
}

func queryOf(r *http.Request) string {
	if r.URL.RawQuery == "" {
		return ""
	}
	return "?" + r.URL.RawQuery
}

// actor is who a write is recorded as: the trusted proxy's user when that
// header is configured and set, else the configured actor.
func (c *Console) actor(r *http.Request) string {
	if c.o.TrustedUserHeader != "" {
		if u := strings.TrimSpace(r.Header.Get(c.o.TrustedUserHeader)); u != "" {
			return u
		}
	}
	return c.o.Actor
}
