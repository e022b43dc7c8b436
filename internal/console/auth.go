package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// cookieName holds the signed session id.
const cookieName = "sett_console"

// session is an authenticated browser session (or a bearer client, which
// has no CSRF token because browsers never send its header on their own).
type session struct {
	id     string
	bearer bool
}

type sessionKey struct{}

func withSession(ctx context.Context, s session) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

func sessionOf(ctx context.Context) session {
	s, _ := ctx.Value(sessionKey{}).(session)
	return s
}

func (c *Console) sign(msg string) string {
	mac := hmac.New(sha256.New, c.key)
	mac.Write([]byte(msg))
	return hex.EncodeToString(mac.Sum(nil))
}

// csrfToken is the per-session token every form carries.
func (c *Console) csrfToken(s session) string {
	if s.bearer {
		return ""
	}
	return c.sign("csrf:" + s.id)
}

// authenticate accepts the token from the query (then sets the session
// cookie and redirects to the same URL without it, so the token leaves the
// address bar and the history), a valid session cookie, or an
// Authorization: Bearer header. Otherwise it answers 401.
func (c *Console) authenticate(w http.ResponseWriter, r *http.Request) (session, bool) {
	if tok := r.URL.Query().Get("token"); tok != "" {
		if !c.tokenOK(tok) {
			http.Error(w, "401 unauthorized: the token in the URL is wrong; open the URL `sett ui` printed", http.StatusUnauthorized)
			return session{}, false
		}
		var b [16]byte
		_, _ = rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id + "." + c.sign("session:"+id), Path: c.base + "/",
			HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		q := r.URL.Query()
		q.Del("token")
		u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			http.Redirect(w, r, u.String(), http.StatusSeeOther)
			return session{}, false
		}
		return session{id: id}, true
	}
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		if c.tokenOK(strings.TrimPrefix(h, "Bearer ")) {
			return session{bearer: true}, true
		}
	}
	if ck, err := r.Cookie(cookieName); err == nil {
		id, sig, ok := strings.Cut(ck.Value, ".")
		if ok && hmac.Equal([]byte(sig), []byte(c.sign("session:"+id))) {
			return session{id: id}, true
		}
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="sett"`)
	http.Error(w, "401 unauthorized: open the URL `sett ui` printed (it carries ?token=...), or send Authorization: Bearer TOKEN", http.StatusUnauthorized)
	return session{}, false
}

func (c *Console) tokenOK(tok string) bool {
	return subtle.ConstantTimeCompare([]byte(tok), []byte(c.o.Token)) == 1
}

// checkWrite refuses a cross-site write: the browser's Sec-Fetch-Site or
// Origin must say same origin, and a browser session must send its CSRF
// token with the form.
func (c *Console) checkWrite(r *http.Request, s session) error {
	if s.bearer {
		return nil
	}
	if err := c.csrfChk.Check(r); err != nil {
		return errors.New("cross-site request refused (" + err.Error() + ")")
	}
	got := r.PostFormValue("csrf")
	if got == "" || !hmac.Equal([]byte(got), []byte(c.csrfToken(s))) {
		return errors.New("the form's CSRF token is missing or belongs to another session; reload the page and try again")
	}
	return nil
}
